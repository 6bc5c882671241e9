package supply

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every place supply's words send a reader to (README: "Heading", or
// docs/FILE.md: "Heading") has that heading.
func TestCitedHeadingsExist(t *testing.T) {
	cite := regexp.MustCompile(`\((README|docs/[\w.-]+\.md): \\"([^"\\]+)\\"\)`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cite.FindAllStringSubmatch(string(src), -1) {
			seen++
			doc := m[1]
			if doc == "README" {
				doc = "README.md"
			}
			text, err := os.ReadFile(filepath.Join("..", doc))
			if err != nil {
				t.Errorf("%s cites %s: %v", f, doc, err)
				continue
			}
			if !regexp.MustCompile(`(?m)^#+ ` + regexp.QuoteMeta(m[2]) + `$`).Match(text) {
				t.Errorf("%s cites %s: %q, which has no such heading", f, m[1], m[2])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no citation found: the pattern no longer matches how supply cites a document")
	}
}
