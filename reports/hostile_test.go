package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/perf/benchfmt"

	"github.com/dbsock/dbsock/results"
)

// hostileText is what a report file, a server or a user may put in any
// string: a table's |, a new line with a heading, HTML, a lone backtick
// before a tag, emphasis, a link and a terminal's escape sequence.
const hostileText = "1|<img src=x onerror=alert(1)>\n# heading `<script>alert(2)</script> *bold* _em_ [link](http://x) &amp; \x1b[2J"

// hostile is the fixture with hostileText in the strings that reports
// print: the target's name, server, image, operation and warnings, the
// case's mode, the --query text, the CPU, kernel and a driver's name.
func hostile(t *testing.T, version string) *results.Report {
	t.Helper()
	r := fixture(t)
	name := "redis|`<b>x</b>\n## h"
	r.Targets[0].Name = name
	r.Targets[0].Server.Version = version
	r.Targets[0].Image = hostileText
	r.Targets[0].Operation = "`GET k` then " + hostileText
	r.Targets[0].Warnings = []results.Warning{results.Says("line one\n## not a heading | <i>x</i>")}
	r.Environment.CPUModel = hostileText
	r.Environment.Kernel = "<script>k</script>"
	r.Tool.Version = "v1 <script>v</script>\n# heading"
	r.Environment.Drivers = map[string]string{hostileText: "v1|2"}
	r.Config.Workload = &results.Workload{Rows: 10, Keys: "uniform", Op: "read", Query: map[string]string{name: "GET `k` | <b>" + version}}
	for i := range r.Runs {
		r.Runs[i].Target = name
		r.Runs[i].Mode = "m|<u>`"
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	// A threshold naming a target of hostile text (what an expression
	// can hold: no comparison sign, no dot): dbsock reads it as written.
	th, err := results.Parse("redis|`*x*`_[l](h)&amp;\x1b[2J\n#heading.unix.p50<2ms")
	if err != nil {
		t.Fatal(err)
	}
	r.Thresholds = results.Evaluate(r, []results.Threshold{th})
	return r
}

// rawHTML matches a tag a report string could carry.
var rawHTML = regexp.MustCompile(`<(script|img|b|i|u)[ >]`)

// checkHTML fails when page holds a tag from the report's strings, a
// heading other than dbsock's own, or a table row with another number of
// cells than its header.
func checkHTML(t *testing.T, what, page string) {
	t.Helper()
	if m := rawHTML.FindString(page); m != "" {
		t.Errorf("%s: HTML from the report's strings: %q", what, m)
	}
	if strings.Contains(page, ">heading<") || strings.Contains(page, ">h</h") || strings.Contains(page, ">not a heading<") {
		t.Errorf("%s: a heading from the report's strings", what)
	}
	for _, table := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(page, -1) {
		head := len(regexp.MustCompile(`<th[ >]`).FindAllString(regexp.MustCompile(`(?s)<thead>.*?</thead>`).FindString(table), -1))
		for _, row := range regexp.MustCompile(`(?s)<tbody>.*?</tbody>`).FindAllString(table, -1) {
			for _, tr := range regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(row, -1) {
				if n := strings.Count(tr, "<td"); n != head {
					t.Errorf("%s: a row of %d cells in a table of %d columns: %s", what, n, head, tr)
				}
			}
		}
	}
}

// markdownHTML renders md as GitHub does (GFM), for checkHTML.
func markdownHTML(t *testing.T, md []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(md, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestHostileStringsRenderAsText: a report whose strings carry |, new
// lines, backticks, HTML and Markdown headings renders in every format as
// text, its tables intact: Markdown and its summary (checked as GitHub
// renders them), HTML, JSON, CSV, the blocks table and benchfmt.
func TestHostileStringsRenderAsText(t *testing.T) {
	r := hostile(t, hostileText)
	out := map[string]*bytes.Buffer{}
	for _, f := range []string{"markdown", "summary", "html", "json", "csv", "blocks", "benchfmt"} {
		out[f] = &bytes.Buffer{}
		if err := Write(out[f], f, r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	golden(t, "hostile.md", out["markdown"].Bytes())
	golden(t, "hostile-summary.md", out["summary"].Bytes())
	golden(t, "hostile.html", out["html"].Bytes())
	golden(t, "hostile.json", out["json"].Bytes())
	golden(t, "hostile.csv", out["csv"].Bytes())
	golden(t, "hostile-blocks.csv", out["blocks"].Bytes())
	golden(t, "hostile.bench", out["benchfmt"].Bytes())

	for _, f := range []string{"markdown", "summary"} {
		checkHTML(t, f, markdownHTML(t, out[f].Bytes()))
		for _, line := range strings.Split(out[f].String(), "\n") {
			for _, h := range []string{"# heading", "## h", "## not a heading"} {
				if strings.HasPrefix(line, h) {
					t.Errorf("%s: a heading from the report's strings: %q", f, line)
				}
			}
		}
	}
	checkHTML(t, "html", out["html"].String())
	for f, b := range out {
		if bytes.ContainsRune(b.Bytes(), 0x1b) {
			t.Errorf("%s: a terminal escape sequence from the report's strings", f)
		}
	}

	var back results.Report
	if err := json.Unmarshal(out["json"].Bytes(), &back); err != nil {
		t.Fatalf("json: %v", err)
	}
	if back.Targets[0].Server.Version != plainText(hostileText) {
		t.Errorf("json: version %q, want %q", back.Targets[0].Server.Version, plainText(hostileText))
	}
	for _, f := range []string{"csv", "blocks"} {
		recs, err := csv.NewReader(bytes.NewReader(out[f].Bytes())).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, rec := range recs[1:] {
			if len(rec) != len(recs[0]) || rec[0] != "redis|`<b>x</b> ## h" {
				t.Errorf("%s: row %q, want %d fields and the target on one line", f, rec, len(recs[0]))
			}
		}
	}
	rd := benchfmt.NewReader(bytes.NewReader(out["benchfmt"].Bytes()), "hostile.bench")
	n := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			n++
			if _, parts := rec.Name.Parts(); len(parts) < 1 || string(parts[0]) != "/target=redis|`<b>x<_b>_##_h" {
				t.Errorf("benchfmt: name %q", rec.Name)
			}
			for _, c := range rec.Config {
				if strings.Contains(c.Key, "heading") || strings.Contains(c.Key, "h") && strings.HasPrefix(c.Key, "#") {
					t.Errorf("benchfmt: a configuration key from the report's strings: %q", c.Key)
				}
			}
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	if n != 16 {
		t.Errorf("benchfmt: %d results, want 16", n)
	}
}

// TestHostileStringsCompareAsText: dbsock compare's Markdown (its
// warnings, the change table and the speedup table) of two such reports
// whose server versions and --query differ is text, its tables intact.
func TestHostileStringsCompareAsText(t *testing.T) {
	old, new := hostile(t, "7.0.15"), hostile(t, hostileText)
	var b bytes.Buffer
	b.WriteString("> **Warning:** " + WorkloadDiffers(old, new) + ".\n\n")
	b.WriteString("> **Warning:** " + strings.Join(RunsDiffer(old, new), "; ") + ".\n\n")
	if err := CompareMarkdown(&b, results.Changes(old, new)); err != nil {
		t.Fatal(err)
	}
	if err := SpeedupMarkdown(&b, old, new); err != nil {
		t.Fatal(err)
	}
	golden(t, "hostile-compare.md", b.Bytes())
	page := markdownHTML(t, b.Bytes())
	checkHTML(t, "compare", page)
	if strings.Count(page, "<tr>") != 1+6+1+1 {
		t.Errorf("compare: %d table rows, want 6 changes and 1 speedup under their headers:\n%s", strings.Count(page, "<tr>"), page)
	}
}
