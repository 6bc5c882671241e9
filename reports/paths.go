package reports

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/results"
)

// The further paths of a run (--paths beyond tcp and unix): each case's
// comparison of a path with TCP, in a table of its own under the headline,
// so that a two-path report reads as it always did.

// pathLabel names a path for people: "TCP6 ([::1])".
func pathLabel(p results.PathSummary) string {
	switch p.Path {
	case "tcp6":
		return "TCP6 ([::1])"
	}
	return p.Path.Label()
}

// PathVerdict puts a further path's verdict in words, with its interval.
func PathVerdict(p *results.PathSummary) string {
	ci := p.SpeedupP50CI
	switch p.VerdictKind {
	case results.NoResult:
		return "no result: every op failed on " + p.Path.Label() + " or TCP"
	case results.TooFewInstances, results.TooFewPairs:
		return verdictWords[p.VerdictKind]
	case results.PathFaster, results.TCPFaster:
		if ci == nil {
			return verdictWords[results.TooFewPairs]
		}
		faster, kind := p.Path.Label(), results.UnixFaster
		if p.VerdictKind == results.TCPFaster {
			faster, kind = "TCP", results.TCPFaster
		}
		lower, lo, hi := lowerLatency(kind, ci)
		return fmt.Sprintf("%s faster: %.1f%% lower p50 latency (95%% CI %.1f%%–%.1f%%; TCP/%s %.3f×)", faster, lower, lo, hi, p.Path.Label(), ci.Center)
	}
	if ci == nil {
		return verdictWords[results.TooFewPairs]
	}
	return fmt.Sprintf("%s: %s", verdictWords[p.VerdictKind], speedupCI(ci))
}

// shortPathVerdict is PathVerdict's first words, for the table.
func shortPathVerdict(p *results.PathSummary) string {
	v := PathVerdict(p)
	if i := strings.Index(v, " latency ("); i > 0 && (p.VerdictKind == results.PathFaster || p.VerdictKind == results.TCPFaster) {
		return v[:i]
	}
	if i := strings.Index(v, ": speedup"); i > 0 {
		return v[:i]
	}
	return v
}

// writePaths is the table of every further path against TCP, when the run
// has any.
func writePaths(b *strings.Builder, r *results.Report) {
	any := false
	for _, s := range r.Summary {
		any = any || len(s.Paths) > 0
	}
	if !any {
		return
	}
	b.WriteString("Other paths to the same servers, each compared with TCP on 127.0.0.1 by the same paired method (speedup: TCP p50 over the path's; above 1, the path is faster):\n\n")
	b.WriteString("| target | path | TCP p50 | path p50 | p50 speedup (95% CI) | verdict |\n|---|---|--:|--:|--:|---|\n")
	sweep := len(r.Summary) > len(r.Targets)
	for _, s := range r.Summary {
		name := s.Target
		if sweep || !isPlain(s.Case) || len(r.Config.ValueSizes) > 0 {
			name = s.Target + ": " + s.Label()
		}
		for i := range s.Paths {
			p := &s.Paths[i]
			u := pickUnit(s.TCP.Latency.P50, p.Latency.P50)
			speed := fmt.Sprintf("%.2f×", p.SpeedupP50)
			if ci := p.SpeedupP50CI; ci != nil {
				speed = fmt.Sprintf("%.2f× (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
			}
			tcp, path := u.fmt(float64(s.TCP.Latency.P50))+" "+u.name, u.fmt(float64(p.Latency.P50))+" "+u.name
			if p.VerdictKind == results.NoResult {
				tcp, path, speed = okOrDash(s.TCP, tcp), okOrDash(p.Side, path), "–"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", cell(name), pathLabel(*p), tcp, path, speed, shortPathVerdict(p))
		}
	}
	b.WriteString("\n")
}
