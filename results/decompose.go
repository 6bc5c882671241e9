package results

import (
	"github.com/dbsock/dbsock/drivers"
)

// Decomposition is where one case's p50 goes on one transport: the kernel
// floor (the floor target, from C where the run measured it from C, else
// from Go's blocking client), the client stack's own cost of a round trip
// on top (for Go's drivers their runtime: echo - floor; for an agent's
// stack its own floor - the kernel floor), and the server's work and
// protocol (the case - that stack's own round trip). The parts add up to
// the case's p50 by construction.
type Decomposition struct {
	Target string
	// Case is the case split: a run that swept value sizes has a plain
	// case of each, each split on its own.
	Case Case
	// Stack is the case's client stack ("" for Go's drivers in dbsock).
	Stack string
	// Placement is the case's placement (Case.Placement): its parts are
	// the floor's and echo's under the same placement.
	Placement string
	Transport drivers.Transport
	Kernel    float64 // ns
	Client    float64
	Server    float64
	Total     float64
	// Exec is the part of Server the server itself reports as executing
	// the command (ns per call), and ExecSource where it says so; -1 when
	// the server does not say.
	Exec       float64
	ExecSource string
}

// Decompose returns the decomposition of every plain case of a target other
// than floor and echo, on every path the report has both floor and echo
// from Go on; nil where it has none. A case from an agent's stack is
// decomposed when the report has floor from that stack too.
func Decompose(r *Report) []Decomposition {
	kernel, runtime := r.LayerTarget(drivers.LayerKernel), r.LayerTarget(drivers.LayerRuntime)
	if kernel == "" || runtime == "" {
		return nil
	}
	var out []Decomposition
	for _, t := range r.PathsOf(kernel) { // every path the floor measured
		for _, s := range r.Summary {
			if s.Target == kernel || s.Target == runtime || !s.Case.Plain() {
				continue
			}
			place := s.Case.Placement
			sideOf := func(target, stack string, t drivers.Transport) (Side, bool) {
				for _, s := range r.Summary {
					if s.Target == target && s.Case.Stack == stack && s.Case.Placement == place && s.Case.Plain() {
						side := s.Side(t)
						return side, side.Latency.P50 > 0
					}
				}
				return Side{}, false
			}
			p50 := func(target, stack string, t drivers.Transport) (float64, bool) {
				side, ok := sideOf(target, stack, t)
				return float64(side.Latency.P50), ok
			}
			floor, okF := kernelFloor(r, p50, kernel, t)
			if _, okE := p50(runtime, "", t); !okF || !okE {
				continue // a path echo did not measure: nothing to split by there
			}
			stack, own := s.Case.Stack, runtime // Go's own round trip: echo, through its runtime
			if stack != "" {
				own = kernel // an agent's: its floor
			}
			trip, okT := p50(own, stack, t)
			side := s.Side(t) // the case's own, never another value size's
			total := float64(side.Latency.P50)
			if total <= 0 || !okT {
				continue
			}
			d := Decomposition{Target: s.Target, Case: s.Case, Stack: stack, Placement: place, Transport: t, Kernel: floor, Client: trip - floor, Server: total - trip, Total: total, Exec: -1}
			if side.ServerExec != nil && side.ServerExec.Calls > 0 {
				d.Exec, d.ExecSource = side.ServerExec.NsPerCall, side.ServerExec.Source
			}
			out = append(out, d)
		}
	}
	return out
}

// kernelFloor is the floor's p50 on t from the stack that declares itself
// the floor's reference where the report has it (C: the kernel's own
// cost, as a C program sees it; Client.FloorReference), else from Go's
// blocking client.
func kernelFloor(r *Report, p50 func(string, string, drivers.Transport) (float64, bool), kernel string, t drivers.Transport) (float64, bool) {
	for _, s := range r.Summary {
		if s.Target == kernel && s.Client != nil && s.Client.FloorReference {
			if v, ok := p50(kernel, s.Case.Stack, t); ok {
				return v, true
			}
		}
	}
	return p50(kernel, "", t)
}

// Plain says whether c is the plain case a run's headline reads: the pk
// scenario, one worker, closed loop.
func (c Case) Plain() bool {
	return c.Scenario == "pk" && c.Concurrency <= 1 && c.Rate == 0
}
