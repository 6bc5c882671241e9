package reports

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestSchemaV1ReportRendersAsItDid: reports written in schema version 1
// (by dbsock before comparisons were data) are read into sides and
// comparisons. A run of TCP and Unix renders to the very Markdown that
// dbsock rendered from it (testdata/v1-two.md, written by that dbsock's
// "report"); a run over tcp, tcp6, tls and unix renders to its Markdown
// with nothing taken away, and only the CPU table's rows of the further
// paths added. The four-path report is written back as version 2 and
// compares with it.
func TestSchemaV1ReportRendersAsItDid(t *testing.T) {
	two := readV1(t, "v1-two")
	if *update { // the words of today's headline, after reading the diff
		for _, name := range []string{"v1-two", "v1-paths"} {
			if err := os.WriteFile("testdata/"+name+".md", []byte(markdownOf(t, readV1(t, name))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, want := markdownOf(t, two), fileText(t, "testdata/v1-two.md"); got != want {
		t.Errorf("the version 1 report of TCP and Unix renders differently from what dbsock rendered from it:\n%s", got)
	}
	r := readV1(t, "v1-paths")
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
	old, got := strings.Split(fileText(t, "testdata/v1-paths.md"), "\n"), strings.Split(markdownOf(t, r), "\n")
	i := 0
	for _, line := range got {
		switch {
		case i < len(old) && line == old[i]:
			i++
		case strings.HasPrefix(line, "| TCP6 ([::1]) | ") || strings.HasPrefix(line, "| TLS (127.0.0.1) | "):
			// a further path's row of the CPU table, which listed TCP and Unix only
		default:
			t.Errorf("line %q is new in the four-path report", line)
		}
	}
	if i != len(old) {
		t.Errorf("the four-path report lost %q and what follows it", old[i])
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
	changes := results.Changes(r, v2)
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

func readV1(t *testing.T, name string) *results.Report {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := results.ReadJSON(f)
	if err != nil {
		t.Fatalf("%s, a version 1 report, does not read: %v", name, err)
	}
	return r
}

func markdownOf(t *testing.T, r *results.Report) string {
	t.Helper()
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	return md.String()
}

func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
