package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportStringsCannotBreakMarkdown: strings from a report file (which
// anyone can write) stay on their line and in their cell, raise no HTML,
// and a huge one is cut, in Markdown and in HTML; code spans keep their <.
func TestReportStringsCannotBreakMarkdown(t *testing.T) {
	r := fixture(t)
	huge := strings.Repeat("v", 8<<20)
	r.Tool.Version = huge
	r.Targets[0].Server.Product = "Evil | <script>alert(1)</script>\n# heading"
	r.Targets[0].Operation = "`SELECT a FROM t WHERE b < ? || c`"
	r.Targets[0].Warnings = []string{"line one\n\n## not a heading"}
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
	for _, want := range []string{`Evil \| &lt;script&gt;`, "`SELECT a FROM t WHERE b < ? || c`", "line one ## not a heading"} {
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
	if again := safeCopy(safeCopy(r)); again.Targets[0].Server.Product != safeCopy(r).Targets[0].Server.Product {
		t.Error("cleaning twice is not cleaning once")
	}
}
