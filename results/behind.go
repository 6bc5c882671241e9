package results

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbsock/dbsock/internal/placement"
)

// GeneratorBehind says why a case's generator fell behind, from what
// dbsock measured of it: the CPU its client and its server spent per op
// and the share of their CPUs that makes at the offered rate, where they
// ran, and how many workers shared a CPU; and what to try.
const GeneratorBehind WarningKind = "generator_behind"

// busyShare is the share of a CPU's time at which a side is taken to be
// out of CPU: above it the scheduler's queue, not the route, sets when an
// op can start.
const busyShare = 0.8

// explainBehind adds, to each case whose generator fell behind on a path,
// what dbsock measured of why.
func (r *Report) explainBehind() {
	for i := range r.Summary {
		s := &r.Summary[i]
		var parts []string
		for _, ps := range s.Sides {
			if g := ps.Generator; g != nil && g.FellBehind {
				parts = append(parts, r.behindOn(s, ps))
			}
		}
		if len(parts) > 0 {
			s.Warnings = append(s.Warnings, Warn(GeneratorBehind, "The generator fell behind the offered %s/s: %s", thousands(s.Sides[0].Generator.OfferedRate), strings.Join(parts, "; ")))
		}
	}
}

// behindOn says why path side ps of s fell behind.
func (r *Report) behindOn(s *Summary, ps PathSide) string {
	g := ps.Generator
	clientCPUs, serverCPUs := r.cpusOf(s.Placement)
	nc, ns := max(len(clientCPUs), 1), max(len(serverCPUs), 1)
	out := fmt.Sprintf("over %s it reached %s/s (the generator's own lateness p99 %s)", ps.Path, thousands(g.AchievedRate), time.Duration(g.LateP99Ns).Round(10*time.Microsecond))
	c := ps.CPU
	if c == nil || c.ClientNsPerOp <= 0 {
		return out + ": dbsock read no CPU figures to say why"
	}
	client := c.ClientNsPerOp * g.OfferedRate / 1e9 / float64(nc)
	out += fmt.Sprintf(": the client spent %s of CPU per op, %.0f%% of its %s at this rate", time.Duration(c.ClientNsPerOp).Round(100*time.Nanosecond), 100*client, cpuWords(clientCPUs))
	server := -1.0
	if c.ServerNsPerOp != nil && *c.ServerNsPerOp > 0 {
		server = *c.ServerNsPerOp * g.OfferedRate / 1e9 / float64(ns)
		out += fmt.Sprintf(", the server %s, %.0f%% of its %s", time.Duration(*c.ServerNsPerOp).Round(100*time.Nanosecond), 100*server, cpuWords(serverCPUs))
	}
	shared := len(clientCPUs) > 0 && slices.Equal(clientCPUs, serverCPUs)
	if w := max(s.Concurrency, 1); w > nc {
		out += fmt.Sprintf("; %d workers on %d client CPU%s", w, nc, plural(nc))
	}
	switch {
	case shared && server >= 0 && client+server >= busyShare:
		return out + fmt.Sprintf(": client and server share %s and together need %.0f%% of it. Try --placement split (the server on a CPU of its own), or a lower rate", cpuWords(clientCPUs), 100*(client+server))
	case client >= busyShare:
		return out + ": the client is out of CPU. Try a lower rate, fewer workers, or a client that costs less CPU per op"
	case server >= busyShare:
		return out + ": the server is out of CPU. Try a lower rate, or more server CPUs"
	}
	return out + ": neither was out of CPU, so the lateness is the machine's own (wake-ups that come late: a virtual machine's stalls, other work on its CPUs). Run again alone, or at a rate whose blocks are longer than the stalls"
}

// cpusOf are the client's and the servers' CPUs under placement mode m
// (the run's placement when m is ""), nil when not pinned.
func (r *Report) cpusOf(m string) (client, server []int) {
	p := r.Config.Placement
	for _, q := range r.Config.Placements {
		if q.Mode == m {
			p = q
		}
	}
	client, _ = placement.ParseListUpTo(p.ClientCPUs, r.Environment.NumCPU)
	server, _ = placement.ParseListUpTo(p.ServerCPUs, r.Environment.NumCPU)
	return client, server
}

// cpuWords names a CPU list: "CPU 0", "CPUs 0,1", "CPUs (not pinned)".
func cpuWords(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "CPUs (not pinned)"
	case 1:
		return "CPU " + placement.FormatList(cpus)
	}
	return "CPUs " + placement.FormatList(cpus)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// thousands writes v rounded, with commas: 3,000.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
