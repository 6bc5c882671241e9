package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// TestReportStringsCannotBreakMarkdown: strings from a report file (which
// anyone can write) stay on their line and in their cell, raise no HTML,
// and a huge one is cut, in Markdown and in HTML; a code span with a |
// in it is text (a table cell would end at the |).
func TestReportStringsCannotBreakMarkdown(t *testing.T) {
	r := fixture(t)
	huge := strings.Repeat("v", 8<<20)
	r.Tool.Version = huge
	r.Targets[0].Server.Product = "Evil | <script>alert(1)</script>\n# heading"
	r.Targets[0].Operation = "`SELECT a FROM t WHERE b < ? || c`"
	r.Targets[0].Warnings = []results.Warning{results.Says("line one\n\n## not a heading")}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if md.Len() > 1<<20 {
		t.Fatalf("an 8 MB version string made a %d-byte report", md.Len())
	}
	for _, bad := range []string{"<script>", "\n# heading", "\n## not a heading", "Evil | <"} {
		if strings.Contains(out, bad) {
			t.Errorf("the report holds %q", bad)
		}
	}
	for _, want := range []string{`Evil \| &lt;script&gt;`, "\\`SELECT a FROM t WHERE b &lt; ? \\|\\| c\\`", "line one ## not a heading"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if r.Tool.Version != huge {
		t.Error("rendering changed the caller's report")
	}
	var html bytes.Buffer
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html.String(), "<script>alert") || html.Len() > 4<<20 {
		t.Errorf("HTML of %d bytes holds the script: %v", html.Len(), strings.Contains(html.String(), "<script>alert"))
	}
	// Each renderer escapes once: Write's Markdown and HTML are not
	// escaped twice.
	r.Targets[0].Server.Product = "x*y"
	for _, f := range []string{"markdown", "html"} {
		var b bytes.Buffer
		if err := Write(&b, f, r); err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"markdown": `x\*y`, "html": "x*y"}[f]; !strings.Contains(b.String(), want) || strings.Contains(b.String(), `\\`) {
			t.Errorf("%s: the product is not written once escaped (%q)", f, want)
		}
	}
}

func TestSafeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis", "redis"},
		{"mysql_native_password", "mysql_native_password"},
		{"_em_ *b* [l](u) ~s~", `\_em\_ \*b\* \[l\](u) \~s\~`},
		{"1|<img src=x onerror=alert(1)>\n# heading", `1\|&lt;img src=x onerror=alert(1)&gt; # heading`},
		{"# heading", `\# heading`},
		{"- item", `\- item`},
		{"1. item", `1\. item`},
		{"7.0.15", "7.0.15"},
		{"`<script>` ok", "`<script>` ok"},
		{"` <script>alert(1)</script>", "\\` &lt;script&gt;alert(1)&lt;/script&gt;"},
		{"``<b>` x", "\\`\\`&lt;b&gt;\\` x"},
		{"`a|b` c", "\\`a\\|b\\` c"},
		{`a\b &amp;`, `a\\b &amp;amp;`},
	}
	for _, tt := range tests {
		if got := safeText(tt.in); got != tt.want {
			t.Errorf("safeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, s := range []string{"a|b", `a\|b`, `a\\|b`, "`x|y`", "`x\\`|y"} {
		c := cell(safeText(s))
		if page := markdownHTML(t, []byte("| h |\n|---|\n| "+c+" |\n")); strings.Count(page, "<td") != 1 {
			t.Errorf("cell(safeText(%q)) = %q is not one cell: %s", s, c, page)
		}
	}
}
