package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// hopReport is a report of one case through a hop over the four routes,
// each compared with both legs on TCP; tail and capacity set the paired
// p99 and capacity of the comparisons (nil: a run at rest).
func hopReport(tail, capacity *results.Paired) *results.Report {
	c := results.Case{Target: "pgbouncer", Scenario: "pk"}
	r := &results.Report{Targets: []results.Target{{Name: "pgbouncer"}}}
	for _, rt := range []struct {
		path drivers.Transport
		hop  drivers.Transport
	}{{drivers.TCPHopTCP, drivers.TCP}, {drivers.UnixHopTCP, drivers.TCP}, {drivers.TCP, drivers.Unix}, {drivers.Unix, drivers.Unix}} {
		r.Runs = append(r.Runs, results.Run{Case: c, Transport: rt.path,
			Connection: results.Connection{Endpoint: drivers.Endpoint{Transport: rt.path, Hop: rt.hop}}})
	}
	s := results.Summary{Case: c}
	for i, p := range []drivers.Transport{drivers.TCP, drivers.UnixHopTCP, drivers.Unix} {
		s.Comparisons = append(s.Comparisons, results.Comparison{Baseline: drivers.TCPHopTCP, Path: p, SpeedupP50: 1.01 + float64(i)/10,
			SpeedupP50CI: &results.Interval{Center: 1.01 + float64(i)/10, Lo: 1, Hi: 1.2 + float64(i)/10}, VerdictKind: results.Undecided,
			Tail: tail, Capacity: capacity})
	}
	r.Summary = []results.Summary{s}
	return r
}

// TestLegsAtLoad: at load, the table of legs moved gives each leg's p99
// and capacity gain beside its p50; at rest it has no such columns.
func TestLegsAtLoad(t *testing.T) {
	var b strings.Builder
	writeHops(&b, hopReport(&results.Paired{Ratio: 1.45, CI: &results.Interval{Center: 1.45, Lo: 1.3, Hi: 1.6}}, &results.Paired{Ratio: 1.25}))
	got := b.String()
	for _, want := range []string{
		"| target | moved | from | to | p50 speedup (95% CI) | p99 speedup (95% CI) | capacity gain (95% CI) | verdict |",
		"| the hop's leg (the client's held on TCP) | TCP, hop TCP | TCP, hop Unix | 1.01× (1.00–1.20) | 1.45× (1.30–1.60) | 1.25× |",
		"| the client's leg (the hop's held on TCP) | TCP, hop TCP | Unix, hop TCP | 1.11× (1.00–1.30) | 1.45× (1.30–1.60) | 1.25× |",
		"| both legs | TCP, hop TCP | Unix, hop Unix | 1.21× (1.00–1.40) |",
		"the hop's own included",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	b.Reset()
	writeHops(&b, hopReport(nil, nil))
	if got := b.String(); strings.Contains(got, "p99") || strings.Contains(got, "capacity") || !strings.Contains(got, "| p50 speedup (95% CI) | verdict |") {
		t.Errorf("at rest, the legs table:\n%s", got)
	}
}
