package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/results"
)

// CompareMarkdown writes the changes as a Markdown table.
func CompareMarkdown(w io.Writer, changes []results.Change) error {
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
			"(golang.org/x/perf/benchmath, as benchstat uses; significant below %.2f). Older reports without blocks count each round as one block.\n", results.Alpha)
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
		s += ", your own query (" + joinByTarget(w.Query) + ")"
	}
	if len(w.KeysFrom) > 0 {
		s += ", your own keys (" + joinByTarget(w.KeysFrom) + ")"
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
				unixOnly = unixOnly && c.Path == results.Socket() && c.Baseline == results.DefaultBaseline()
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
