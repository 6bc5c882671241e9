package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

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
func Decompose(r *results.Report) []Decomposition {
	kernel, runtime := r.LayerTarget(drivers.LayerKernel), r.LayerTarget(drivers.LayerRuntime)
	if kernel == "" || runtime == "" {
		return nil
	}
	sideOf := func(target string, t drivers.Transport) (results.Side, bool) {
		for _, s := range r.Summary {
			if s.Target == target && isPlain(s.Case) {
				if t == drivers.Unix {
					return s.Unix, s.Unix.Latency.P50 > 0
				}
				return s.TCP, s.TCP.Latency.P50 > 0
			}
		}
		return results.Side{}, false
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
			if s.Target == kernel || s.Target == runtime || !isPlain(s.Case) {
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

// writeDecomposition gives, per transport, where each target's p50 goes.
func writeDecomposition(b *strings.Builder, r *results.Report) {
	parts := Decompose(r)
	if len(parts) == 0 {
		return
	}
	b.WriteString("### Where the microseconds go\n\n")
	b.WriteString("Each target's p50, split by what the floor and echo targets measured in the same run: the kernel floor " +
		"(a blocking-syscall ping-pong, as a C program would do it), the Go client runtime on top of it (echo, the same ping-pong " +
		"through Go's netpoller, minus the floor), and the server's own work and protocol (the target minus echo). " +
		"The parts add up to the measured p50; a negative part means the server answers faster than dbsock's echo server.\n\n")
	b.WriteString("| target | transport | kernel floor | + Go client runtime | + server work and protocol | = measured p50 | of which the server says it executed |\n|---|---|--:|--:|--:|--:|--:|\n")
	sources := map[string]string{}
	for _, d := range parts {
		exec := "not reported"
		if d.Exec >= 0 {
			exec = fmt.Sprintf("%.1f µs", d.Exec/1e3)
			sources[d.Target] = d.ExecSource
		}
		fmt.Fprintf(b, "| %s | %s | %.1f µs | %+.1f µs | %+.1f µs | %.1f µs | %s |\n", d.Target, d.Transport.Label(),
			d.Kernel/1e3, d.GoRuntime/1e3, d.Server/1e3, d.Total/1e3, exec)
	}
	b.WriteString("\nThe last column is the server's own account of executing the command (a mean per call over the same timed blocks)")
	for _, k := range slices.Sorted(maps.Keys(sources)) {
		fmt.Fprintf(b, "; %s: %s", k, sources[k])
	}
	b.WriteString("; the other servers do not report it")
	if setups := drivers.ExecSetups(); len(setups) > 0 {
		b.WriteString(" without extra setup (" + strings.Join(setups, ", ") + ")")
	}
	b.WriteString(".\n\n")
}
