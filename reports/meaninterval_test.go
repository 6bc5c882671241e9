package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestP50IntervalWithoutMeanInterval: a report whose case has the p50's
// interval and no mean's (schema 1 and 2) renders in every format, its
// Markdown giving the p50's interval and no mean's (it was a nil pointer
// in writeVerdict).
func TestP50IntervalWithoutMeanInterval(t *testing.T) {
	for _, tt := range []struct{ file, field string }{
		{"testdata/report-apart.json", "speedup_mean_ci"},
		{"testdata/v1-two.json", "unix_speedup_mean_ci"},
	} {
		b, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, s := range doc["summary"].([]any) {
			s := s.(map[string]any)
			delete(s, tt.field)
			if cs, ok := s["comparisons"].([]any); ok {
				for _, c := range cs {
					delete(c.(map[string]any), tt.field)
				}
			}
		}
		if b, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		r, err := results.ReadJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary[0].Against(drivers.Unix).SpeedupP50CI == nil || r.Summary[0].Against(drivers.Unix).SpeedupMeanCI != nil {
			t.Fatalf("%s: the fixture has no p50 interval or still a mean one", tt.file)
		}
		for _, f := range []string{"markdown", "summary", "html", "json", "csv", "blocks", "benchfmt"} {
			var out bytes.Buffer
			if err := Write(&out, f, r); err != nil {
				t.Errorf("%s as %s: %v", tt.file, f, err)
			}
			if f == "markdown" && (!strings.Contains(out.String(), " at p50; sign test p ") || strings.Contains(out.String(), " at mean; sign test")) {
				t.Errorf("%s: the verdict's line does not give the p50 interval alone:\n%s", tt.file, out.String())
			}
		}
	}
}
