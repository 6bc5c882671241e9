package reports

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestSchemaV1ReportRendersAsItDid: a report written in schema version 1
// (by dbsock before comparisons were data: a run of redis and postgres
// over tcp, tcp6, tls and unix) is read into sides and comparisons, renders
// to the very Markdown that dbsock rendered from it (testdata/v1-paths.md,
// written by that dbsock's "report"), is written back as version 2, and
// compares with a version 2 report of the same run.
func TestSchemaV1ReportRendersAsItDid(t *testing.T) {
	f, err := os.Open("testdata/v1-paths.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := results.ReadJSON(f)
	if err != nil {
		t.Fatalf("a version 1 report does not read: %v", err)
	}
	if r.SchemaVersion != results.SchemaVersion || len(r.Summary) != 2 {
		t.Fatalf("schema %d, %d cases; want %d and 2", r.SchemaVersion, len(r.Summary), results.SchemaVersion)
	}
	for _, s := range r.Summary {
		if len(s.Sides) != 4 || len(s.Comparisons) != 3 {
			t.Fatalf("%s: %d sides and %d comparisons, want 4 and 3", s.Target, len(s.Sides), len(s.Comparisons))
		}
		for _, p := range []drivers.Transport{drivers.Unix, drivers.TCP6, drivers.TLS} {
			c := s.ComparisonOf(p)
			if c == nil || c.Baseline != drivers.TCP || c.SpeedupP50 <= 0 || c.VerdictKind == "" {
				t.Errorf("%s %s: comparison %+v", s.Target, p, c)
			}
		}
	}
	want, err := os.ReadFile("testdata/v1-paths.md")
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if md.String() != string(want) {
		t.Errorf("the version 1 report renders differently from what dbsock rendered from it:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := Write(&js, "json", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"schema_version": 2`) || !strings.Contains(js.String(), `"comparisons"`) {
		t.Error("the report is not written back as version 2")
	}
	v2, err := results.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	changes := Compare(r, v2)
	if len(changes) != 2*4*3 {
		t.Fatalf("%d changes, want one per case, path and metric (24)", len(changes))
	}
	for _, c := range changes {
		if c.Delta != 0 || c.Significant {
			t.Errorf("the same run compared with itself moved: %+v", c)
		}
	}
	var b strings.Builder
	if err := SpeedupMarkdown(&b, r, v2); err != nil || strings.Count(b.String(), "overlap: no change shown")+strings.Count(b.String(), "no interval to compare") != 6 {
		t.Errorf("the speedups of six comparisons: %v\n%s", err, b.String())
	}
}
