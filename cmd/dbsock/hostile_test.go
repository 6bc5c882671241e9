package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// TestHostileReportRendersAsText: dbsock report, in every --format, and
// dbsock compare of a report whose strings carry |, new lines, backticks,
// HTML and Markdown headings (reports/testdata/hostile.json) write them
// as text: no tag and no heading of theirs, and every table row has its
// header's number of cells; compare's error lines stay one line each.
func TestHostileReportRendersAsText(t *testing.T) {
	const hostile = "../../reports/testdata/hostile.json"
	for _, f := range []string{"markdown", "html", "json", "csv", "blocks", "benchfmt"} {
		code, stdout, stderr := dbsock(t, "report", hostile, "--format", f)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d: %s", f, code, stderr)
		}
		if f == "markdown" || f == "html" {
			checkNoMarkup(t, "report --format "+f, stdout)
		}
	}
	// The same report with another server version and --query: compare
	// warns of both, in Markdown.
	b, err := os.ReadFile(hostile)
	if err != nil {
		t.Fatal(err)
	}
	var r results.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r.Targets[0].Server.Version = "7.0.15\n# heading <script>x</script>"
	for k := range r.Config.Workload.Query {
		r.Config.Workload.Query[k] = "GET ` <img src=x>\n## h |"
	}
	other := filepath.Join(t.TempDir(), "other.json")
	if b, err = json.Marshal(&r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := dbsock(t, "compare", hostile, other)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "different workloads") || !strings.Contains(stdout, "'s server") {
		t.Errorf("compare does not warn of the workload and the server:\n%s", stdout)
	}
	checkNoMarkup(t, "compare", stdout)
	// --fail-on-regression's error lines (plain text) are one line each,
	// without a terminal's escape sequences: those that refuse the pair,
	// made differently, name the server as the file does.
	r.Targets[0].Server.Version += " \x1b[2J"
	if b, err = json.Marshal(&r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = dbsock(t, "compare", hostile, other, "--fail-on-regression", "10%")
	if code != 1 || !strings.Contains(stderr, "and Redis 7.0.15 # heading <script>x</script> [2J in "+other) || !strings.Contains(stderr, "no case was judged") ||
		strings.Contains(stderr, "\n# heading") || strings.ContainsRune(stderr, 0x1b) {
		t.Errorf("compare --fail-on-regression: exit %d, stderr:\n%s", code, stderr)
	}
}

// checkNoMarkup fails when out (Markdown or HTML) holds a tag or heading
// from the report's strings, or a table row whose cells are not as many as
// its header's.
func checkNoMarkup(t *testing.T, what, out string) {
	t.Helper()
	if m := regexp.MustCompile(`<(script|img|b|i|u)[ >]`).FindString(out); m != "" {
		t.Errorf("%s: HTML from the report: %q", what, m)
	}
	cols := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# heading") || strings.HasPrefix(line, "## h") || strings.HasPrefix(line, "## not a heading") {
			t.Errorf("%s: a heading from the report: %q", what, line)
		}
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		// Cells are split at | not escaped with a backslash.
		n := len(regexp.MustCompile(`(^|[^\\])(\\\\)*\|`).FindAllString(line, -1)) - 1
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("%s: a row of %d cells under a header of %d: %q", what, n, cols, line)
		}
	}
}
