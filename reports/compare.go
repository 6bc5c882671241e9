package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"
	"golang.org/x/perf/benchmath"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// Alpha is the significance level of comparisons.
const Alpha = 0.05

// Change is how one metric of one target and transport moved between two
// reports.
type Change struct {
	results.Case
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

// Compare pairs the summaries of old and new by case and path: every
// path both reports measured (TCP, the socket and the further ones).
func Compare(old, new *results.Report) []Change {
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
						c.Significant = cmp.P < Alpha
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func metric(l results.Latency, m string) float64 {
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
func perBlock(r *results.Report, c results.Case, t drivers.Transport, m string) []float64 {
	var v []float64
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Case != c || run.Transport != t || run.Incomplete {
			continue
		}
		for _, b := range results.BlocksOf(run) {
			if b.N-b.Errors > 0 {
				v = append(v, metric(results.Latency{P50: b.P50, P99: b.P99, Mean: b.Mean}, m))
			}
		}
	}
	return v
}

// Missing returns the cases of old that new does not have.
func Missing(old, new *results.Report) []results.Case {
	var out []results.Case
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

// CompareMarkdown writes the changes as a Markdown table.
func CompareMarkdown(w io.Writer, changes []Change) error {
	b := &strings.Builder{}
	b.WriteString("| target | case | transport | metric | old | new | change | p | significant |\n")
	b.WriteString("|---|---|---|---|--:|--:|--:|--:|---|\n")
	for _, c := range changes {
		u := pickUnit(int64(c.Old), int64(c.New))
		sig := "no"
		if c.Significant {
			sig = "**yes**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s %s | %s %s | %+.1f%% | %.3f | %s |\n", cell(safeText(c.Target)), cell(safeText(c.Label())), cell(safeText(c.Transport.Label())), c.Metric,
			u.fmt(c.Old), u.name, u.fmt(c.New), u.name, 100*c.Delta, c.P, sig)
	}
	if len(changes) == 0 {
		b.WriteString("\nThe two reports share no target and case (scenario, concurrency, value size, mode, rate).\n")
	} else {
		fmt.Fprintf(b, "\nChange is new against old, pooled over rounds; p is a Mann-Whitney U test of the two reports' per-block values "+
			"(golang.org/x/perf/benchmath, as benchstat uses; significant below %.2f). Older reports without blocks count each round as one block.\n", Alpha)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WorkloadDiffers says how the workloads of old and new differ ("" when
// they are the same): comparing latencies of different workloads compares
// the workloads, not the transports or the code. It is Markdown: the
// reports' strings in it are escaped (markdownText).
func WorkloadDiffers(old, new *results.Report) string {
	a, b := old.Config.Workload, new.Config.Workload
	if workloadText(a) == workloadText(b) {
		return ""
	}
	if a != nil {
		a = cleanCopy(a, safeText)
	}
	if b != nil {
		b = cleanCopy(b, safeText)
	}
	return fmt.Sprintf("the two reports measured different workloads: %s against %s", workloadText(a), workloadText(b))
}

func workloadText(w *results.Workload) string {
	if w == nil {
		return "one row (no workload recorded)"
	}
	op := w.Op
	if w.Mix != "" {
		op += " " + w.Mix
	}
	s := fmt.Sprintf("%s of %s rows by %s keys", op, humanize.Comma(int64(w.Rows)), w.Keys)
	switch w.Keys {
	case "zipf":
		s += fmt.Sprintf(" (theta %g)", w.Theta)
	case "hotspot":
		s += fmt.Sprintf(" (%g of the ops on %g of the rows)", w.HotOps, w.HotRows)
	}
	if len(w.Query) > 0 {
		s += ", --query " + joinByTarget(w.Query)
	}
	if len(w.KeysFrom) > 0 {
		s += ", --keys-from " + joinByTarget(w.KeysFrom)
	}
	return s
}

// SpeedupMarkdown writes, for every comparison both reports hold (a case,
// a path and its baseline), the p50 speedup of each with its 95% interval,
// and whether they differ: their intervals do not overlap (a conservative
// reading of two independent intervals). A report of TCP and Unix alone
// gets the table of Unix speedups it always had; nothing when the reports
// share no comparison.
func SpeedupMarkdown(w io.Writer, old, new *results.Report) error {
	b := &strings.Builder{}
	ci := func(c *results.Comparison) string {
		if ci := c.SpeedupP50CI; ci != nil {
			return fmt.Sprintf("%.3f× (%.3f–%.3f)", ci.Center, ci.Lo, ci.Hi)
		}
		return fmt.Sprintf("%.3f× (no interval)", c.SpeedupP50)
	}
	unixOnly := true
	for _, r := range []*results.Report{old, new} {
		for _, s := range r.Summary {
			for _, c := range s.Comparisons {
				unixOnly = unixOnly && c.Path == drivers.Unix && c.Baseline == drivers.TCP
			}
		}
	}
	for _, ns := range new.Summary {
		for _, os := range old.Summary {
			if os.Case != ns.Case {
				continue
			}
			for i := range ns.Comparisons {
				nc := &ns.Comparisons[i]
				oc := os.ComparisonOf(nc.Path)
				if oc == nil || oc.Baseline != nc.Baseline {
					continue // a comparison the old run did not make
				}
				if b.Len() == 0 && unixOnly {
					b.WriteString("\n| target | case | old Unix speedup (p50, 95% CI) | new | intervals |\n|---|---|--:|--:|---|\n")
				} else if b.Len() == 0 {
					b.WriteString("\n| target | case | path (over its baseline) | old speedup (p50, 95% CI) | new | intervals |\n|---|---|---|--:|--:|---|\n")
				}
				verdict := "overlap: no change shown"
				if o, n := oc.SpeedupP50CI, nc.SpeedupP50CI; o == nil || n == nil {
					verdict = "no interval to compare"
				} else if o.Hi < n.Lo || n.Hi < o.Lo {
					verdict = "**apart: the speedup changed**"
				}
				path := ""
				if !unixOnly {
					path = " " + nc.Path.Label() + " over " + nc.Baseline.Label() + " |"
				}
				fmt.Fprintf(b, "| %s | %s |%s %s | %s | %s |\n", cell(safeText(ns.Target)), cell(safeText(ns.Label())), path, ci(oc), ci(nc), verdict)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
