package results

import (
	"golang.org/x/perf/benchmath"

	"github.com/dbsock/dbsock/drivers"
)

// The regression test of dbsock compare: two reports' cases, path by path
// and metric by metric, each a Mann-Whitney U test of the two runs'
// per-block values (golang.org/x/perf/benchmath's AssumeNothing, as
// benchstat uses). The words are package reports'.

// Change is how one metric of one target and transport moved between two
// reports.
type Change struct {
	Case
	Transport drivers.Transport
	Metric    string  // p50, p99 or mean
	Old, New  float64 // nanoseconds, pooled over rounds
	Delta     float64 // (new-old)/old
	// P is the Mann-Whitney U test p-value of the two reports' block
	// values (each block's p50, p99 or mean); 1 when there are too few
	// blocks to tell.
	P           float64
	Significant bool
	// OldBlocks and NewBlocks count the blocks compared.
	OldBlocks, NewBlocks int
}

// Changes pairs the summaries of old and new by case and path: every
// path both reports measured (TCP, the socket and the further ones).
func Changes(old, new *Report) []Change {
	var out []Change
	for _, ns := range new.Summary {
		for _, os := range old.Summary {
			if os.Case != ns.Case {
				continue
			}
			for _, ps := range ns.Sides {
				t, nside := ps.Path, ps.Side
				oside, ok := os.SideOf(t)
				if !ok {
					continue // a path the old run did not measure
				}
				for _, m := range []string{"p50", "p99", "mean"} {
					c := Change{Case: ns.Case, Transport: t, Metric: m,
						Old: metric(oside.Latency, m), New: metric(nside.Latency, m), P: 1}
					if c.Old > 0 {
						c.Delta = (c.New - c.Old) / c.Old
					}
					a, b := perBlock(old, os.Case, t, m), perBlock(new, ns.Case, t, m)
					c.OldBlocks, c.NewBlocks = len(a), len(b)
					if len(a) >= 2 && len(b) >= 2 {
						cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &benchmath.DefaultThresholds),
							benchmath.NewSample(b, &benchmath.DefaultThresholds))
						c.P = cmp.P
						c.Significant = cmp.P < Alpha // the verdicts' level
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func metric(l Latency, m string) float64 {
	switch m {
	case "p50":
		return float64(l.P50)
	case "p99":
		return float64(l.P99)
	}
	return l.Mean
}

// perBlock returns metric m of every block of case c on transport t (a
// run without blocks counts as one).
func perBlock(r *Report, c Case, t drivers.Transport, m string) []float64 {
	var v []float64
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Case != c || run.Transport != t || run.Incomplete {
			continue
		}
		for _, b := range BlocksOf(run) {
			if b.N-b.Errors > 0 {
				v = append(v, metric(Latency{P50: b.P50, P99: b.P99, Mean: b.Mean}, m))
			}
		}
	}
	return v
}

// Missing returns the cases of old that new does not have.
func Missing(old, new *Report) []Case {
	var out []Case
	for _, os := range old.Summary {
		found := false
		for _, ns := range new.Summary {
			found = found || ns.Case == os.Case
		}
		if !found {
			out = append(out, os.Case)
		}
	}
	return out
}

// Regressions returns the changes where p50 or mean got significantly
// slower by more than bound (0.1 for 10%). p99 is too noisy to gate on.
func Regressions(changes []Change, bound float64) []Change {
	var out []Change
	for _, c := range changes {
		if c.Significant && c.Metric != "p99" && c.Delta > bound {
			out = append(out, c)
		}
	}
	return out
}
