package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// TestTargetWarningsSaidOnce: a target measured from several stacks has
// its own warnings said once under its name, not on each of its rows
// (where "redis from Python: redis from c is not measured on the tls
// path" read as nonsense); a target of one row keeps them on its row.
func TestTargetWarningsSaidOnce(t *testing.T) {
	tls := results.Says("redis from c is not measured on the tls path.")
	r := &results.Report{
		Targets: []results.Target{{Name: "redis", Warnings: []results.Warning{tls}}, {Name: "mysql", Warnings: []results.Warning{results.Says("The machine was noisy.")}}},
		Summary: []results.Summary{
			{Case: results.Case{Target: "redis", Stack: "c"}}, {Case: results.Case{Target: "redis", Stack: "python"}},
			{Case: results.Case{Target: "mysql"}},
		},
	}
	if ws := rowWarnings(r, r.Summary[1]); len(ws) != 0 {
		t.Errorf("redis from python's row: %q, want none of its target's", ws)
	}
	if ws := rowWarnings(r, r.Summary[2]); len(ws) != 1 || ws[0] != "The machine was noisy." {
		t.Errorf("mysql's one row: %q", ws)
	}
	var b strings.Builder
	writeWarnings(&b, targetWarnings(r))
	if got := b.String(); strings.Count(got, "not measured on the tls path") != 1 || !strings.Contains(got, "redis (all its rows): redis from c is not measured on the tls path") {
		t.Errorf("footnote %q", got)
	}
}
