package results

import "github.com/dbsock/dbsock/drivers"

// Decomposition is where one target's p50 goes on one transport: the
// kernel floor (the floor target), the Go client runtime on top (echo -
// floor), and the server's work and protocol (target - echo). The parts
// add up to the target's p50 by construction.
type Decomposition struct {
	Target    string
	Transport drivers.Transport
	Kernel    float64 // ns
	GoRuntime float64
	Server    float64
	Total     float64
	// Exec is the part of Server the server itself reports as executing
	// the command (ns per call), and ExecSource where it says so; -1 when
	// the server does not say.
	Exec       float64
	ExecSource string
}

// Decompose returns the decomposition of every plain case of a target other
// than floor and echo, when the report has both floor and echo; nil
// otherwise.
func Decompose(r *Report) []Decomposition {
	kernel, runtime := r.LayerTarget(drivers.LayerKernel), r.LayerTarget(drivers.LayerRuntime)
	if kernel == "" || runtime == "" {
		return nil
	}
	sideOf := func(target string, t drivers.Transport) (Side, bool) {
		for _, s := range r.Summary {
			if s.Target == target && s.Case.Plain() {
				if t == drivers.Unix {
					return s.Unix, s.Unix.Latency.P50 > 0
				}
				return s.TCP, s.TCP.Latency.P50 > 0
			}
		}
		return Side{}, false
	}
	p50 := func(target string, t drivers.Transport) (float64, bool) {
		side, ok := sideOf(target, t)
		return float64(side.Latency.P50), ok
	}
	var out []Decomposition
	for _, t := range drivers.Transports {
		floor, okF := p50(kernel, t)
		echo, okE := p50(runtime, t)
		if !okF || !okE {
			return nil
		}
		for _, s := range r.Summary {
			if s.Target == kernel || s.Target == runtime || !s.Case.Plain() {
				continue
			}
			if total, ok := p50(s.Target, t); ok {
				d := Decomposition{Target: s.Target, Transport: t, Kernel: floor, GoRuntime: echo - floor, Server: total - echo, Total: total, Exec: -1}
				if side, _ := sideOf(s.Target, t); side.ServerExec != nil && side.ServerExec.Calls > 0 {
					d.Exec, d.ExecSource = side.ServerExec.NsPerCall, side.ServerExec.Source
				}
				out = append(out, d)
			}
		}
	}
	return out
}

// Plain says whether c is the plain case a run's headline reads: the pk
// scenario, one worker, closed loop.
func (c Case) Plain() bool {
	return c.Scenario == "pk" && c.Concurrency <= 1 && c.Rate == 0
}
