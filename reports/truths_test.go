package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// A target whose server read fewer rows than the workload seeds (FerretDB
// reads one document) is named beside the rows in the method sentence,
// which otherwise says every lookup read one of the seeded rows.
func TestMethodSaysATargetReadFewerRows(t *testing.T) {
	r := fixture(t)
	r.Config.Workload = &results.Workload{Rows: 10000, Keys: "uniform", Op: "read"}
	if got := methodSentence(r); !strings.Contains(got, "one of 10,000 seeded rows, chosen") {
		t.Fatalf("a target that read every row: %s", got)
	}
	r.Targets[0].Rows = 1
	want := "one of 10,000 seeded rows (redis: the same single row, as its details say), chosen"
	if got := methodSentence(r); !strings.Contains(got, want) {
		t.Fatalf("a target limited to one row: got\n%s\nwant it to contain %q", got, want)
	}
	r.Targets[0].Rows = 500
	if got := methodSentence(r); !strings.Contains(got, "(redis: one of 500 rows, as its details say)") {
		t.Fatalf("a target limited to 500 rows: %s", got)
	}
	r.Config.Workload.KeysFrom = map[string]string{"redis": "keys.txt"}
	if got := methodSentence(r); strings.Contains(got, "as its details say") {
		t.Fatalf("a target reading the user's keys is said by the keys' phrase: %s", got)
	}
}
