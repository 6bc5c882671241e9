package dbsock_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docMarker precedes, in docs/library.md, the test file and the commands
// that TestLibraryFromACheckout runs.
const docMarker = "<!-- TestLibraryFromACheckout runs"

// fenced returns the body of the first code block fenced as lang in doc,
// and what follows it.
func fenced(t *testing.T, doc, lang string) (body, rest string) {
	t.Helper()
	open := "```" + lang + "\n"
	i := strings.Index(doc, open)
	if i < 0 {
		t.Fatalf("docs/library.md: no ```%s block after %q", lang, docMarker)
	}
	doc = doc[i+len(open):]
	j := strings.Index(doc, "\n```\n")
	if j < 0 {
		t.Fatalf("docs/library.md: the ```%s block is not closed", lang)
	}
	return doc[:j+1], doc[j:]
}

// TestLibraryFromACheckout: docs/library.md's way of using dbsock from a
// checkout, run as written in a module outside this repository: its test
// file (the user's table and query), then its commands (a replace
// directive to this checkout, tidy, vet, the test), which measure.
func TestLibraryFromACheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own and starts PostgreSQL; skipped with -short")
	}
	b, err := os.ReadFile("docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, docMarker)
	if i < 0 {
		t.Fatalf("docs/library.md has no %q: what does this test run?", docMarker)
	}
	src, rest := fenced(t, doc[i:], "go")
	script, _ := fenced(t, rest, "sh")
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "products") // the user's module
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "product_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DBSOCK="+root, "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), "--- SKIP: TestProductByID") {
			t.Skipf("no PostgreSQL here:\n%s", out)
		}
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "mod", "init", "example.com/products") // "a new one"
	out := run("bash", "-euo", "pipefail", "-c", script)
	if !strings.Contains(out, "--- PASS: TestProductByID") || !strings.Contains(out, "product-by-id: TCP p50 ") {
		t.Fatalf("the user's test did not measure:\n%s", out)
	}
	if mod, _ := os.ReadFile(filepath.Join(dir, "go.mod")); !strings.Contains(string(mod), "github.com/dbsock/dbsock => "+root) {
		t.Errorf("the user's go.mod does not take dbsock from this checkout:\n%s", mod)
	}
	t.Logf("from a module outside this repository:\n%s", out)
}
