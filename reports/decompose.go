package reports

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// writeDecomposition gives, per transport, where each target's p50 goes.
func writeDecomposition(b *strings.Builder, r *results.Report) {
	parts := results.Decompose(r)
	if len(parts) == 0 {
		return
	}
	b.WriteString("### Where the microseconds go\n\n")
	stacks := slices.ContainsFunc(parts, func(d results.Decomposition) bool { return d.Stack != "" })
	if !stacks {
		b.WriteString("Each target's p50, split by what the floor and echo targets measured in the same run: the kernel floor " +
			"(a blocking-syscall ping-pong, as a C program would do it), the Go client runtime on top of it (echo, the same ping-pong " +
			"through Go's netpoller, minus the floor), and the server's own work and protocol (the target minus echo). " +
			"The parts add up to the measured p50; a negative part means the server answers faster than dbsock's echo server.\n\n")
		b.WriteString("| target | transport | kernel floor | + Go client runtime | + server work and protocol | = measured p50 | of which the server says it executed |\n|---|---|--:|--:|--:|--:|--:|\n")
	} else {
		b.WriteString("Each case's p50, split by what the floor and echo targets measured in the same run from each stack: the kernel floor " +
			"(the floor's blocking ping-pong from C, or from Go's blocking client where C did not run), the stack's own cost of a round trip " +
			"on top of it (Go: echo, the ping-pong through Go's netpoller; another stack: its own floor; minus the kernel floor), and the server's " +
			"own work and protocol with the stack's library (the case minus the stack's own round trip). The parts add up to the measured p50; " +
			"a negative part means the stack's own round trip is faster than the one it is measured against. A stack that has no floor here " +
			"is not split.\n\n")
		b.WriteString("| target and client | transport | kernel floor | + the stack's client | + server work and protocol | = measured p50 | of which the server says it executed |\n|---|---|--:|--:|--:|--:|--:|\n")
	}
	sources := map[string]string{}
	for _, d := range parts {
		exec := "not reported"
		if d.Exec >= 0 {
			exec = fmt.Sprintf("%.1f µs", d.Exec/1e3)
			sources[d.Target] = d.ExecSource
		}
		name := d.Target
		if stacks {
			name += " from " + cmp.Or(d.Stack, "go")
		}
		if d.Placement != "" {
			name += ", placed " + results.PlacementName(d.Placement)
		}
		fmt.Fprintf(b, "| %s | %s | %.1f µs | %+.1f µs | %+.1f µs | %.1f µs | %s |\n", cell(name), d.Transport.Label(),
			d.Kernel/1e3, d.Client/1e3, d.Server/1e3, d.Total/1e3, exec)
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
	writeWaits(b, r)
}

// writeWaits gives, per case and path, what each side spent waiting for a
// CPU and the client's CPU per op: on a CPU client and server share, the
// server woken by a request waits while the client still runs, so a
// client that spends more of the CPU between its write and its blocking
// read (a runtime's scheduler, a netpoller) makes the server wait longer
// (docs/method.md).
func writeWaits(b *strings.Builder, r *results.Report) {
	var lines []string
	for _, s := range r.Summary {
		for _, ps := range s.Sides {
			c := ps.CPU
			if c == nil || c.ServerWaitNsPerOp == nil || c.ClientWaitNsPerOp == nil {
				continue
			}
			lines = append(lines, fmt.Sprintf("| %s | %s | %.1f µs | %.2f | %.1f µs | %.1f µs |", cell(s.Target+": "+s.Label()), ps.Path.Label(),
				c.ClientNsPerOp/1e3, c.ClientCswPerOp, *c.ClientWaitNsPerOp/1e3, *c.ServerWaitNsPerOp/1e3))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("Where the CPU went between a request and its answer, per op over the timed blocks: the client's CPU time and context switches, and the time each side " +
		"was runnable but waited for a CPU (its threads' schedstat). Where client and server share a CPU, the server a request wakes waits until the client " +
		"gives the CPU up, so a client that spends more of it between its write and its blocking read makes the server wait longer.\n\n" +
		"| case | transport | client CPU/op | client csw/op | client waited/op | server waited/op |\n|---|---|--:|--:|--:|--:|\n")
	b.WriteString(strings.Join(lines, "\n") + "\n\n")
}
