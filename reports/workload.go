package reports

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// distinctRows says how many distinct rows target's runs read per round,
// per transport ("" when its ops read no rows).
func distinctRows(r *results.Report, target string) string {
	var parts []string
	for _, tr := range drivers.Transports {
		lo, hi := int64(-1), int64(0)
		for _, run := range r.Runs {
			if run.Target != target || run.Transport != tr || run.DistinctKeys == 0 {
				continue
			}
			if lo < 0 || run.DistinctKeys < lo {
				lo = run.DistinctKeys
			}
			hi = max(hi, run.DistinctKeys)
		}
		if lo < 0 {
			continue
		}
		n := humanize.Comma(lo)
		if hi != lo {
			n += " to " + humanize.Comma(hi)
		}
		parts = append(parts, tr.Label()+" "+n)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " distinct"
}

// workloadPhrase says what the ops read, for the method sentence: "" for
// reports that read one row (older dbsock, or --rows 1 said as such).
func workloadPhrase(w *results.Workload) string {
	if w == nil {
		return ""
	}
	if w.Rows == 1 {
		return "; every lookup reads the same single row"
	}
	keys := w.Keys + " keys"
	switch w.Keys {
	case "zipf":
		keys = fmt.Sprintf("zipfian keys (YCSB's scrambled zipfian, theta %g)", w.Theta)
	case "hotspot":
		keys = fmt.Sprintf("a hotspot (%g%% of the ops on %g%% of the rows)", 100*w.HotOps, 100*w.HotRows)
	case "sequential":
		keys = "keys in order"
	}
	verb := "lookup reads"
	if w.Op == "update" {
		verb = "update writes"
	}
	return fmt.Sprintf("; each %s one of %s seeded rows, chosen by %s, the same rows in both blocks of a pair", verb, humanize.Comma(int64(w.Rows)), keys)
}
