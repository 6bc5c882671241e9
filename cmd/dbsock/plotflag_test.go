package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotDrawsThePicturesAskedFor: --plot FILE is the speedups alone,
// KIND:FILE another picture by name, all:FILE the speedups with every
// picture that has something to draw beside it; the Markdown links the
// speedups; a picture's name mistyped exits 2 before anything is drawn.
func TestPlotDrawsThePicturesAskedFor(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join("..", "..", "reports", "testdata", "v1-two.json")
	p := func(name string) string { return filepath.Join(dir, name) }
	code, _, errs := dbsock(t, "report", report, "--plot", "percentiles:"+p("p.svg"), "--plot", p("post.png"), "-o", p("r.md"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(p("post.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() != 800 {
		t.Fatalf("post.png: %v, %v; want an 800 px wide PNG", err, img)
	}
	svg, _ := os.ReadFile(p("p.svg"))
	md, _ := os.ReadFile(p("r.md"))
	if !strings.Contains(string(svg), ">percentile<") || !strings.Contains(string(md), "](post.png)") {
		t.Errorf("the percentiles picture or the Markdown's link to the speedups is missing:\n%s", md)
	}
	code, _, errs = dbsock(t, "report", report, "--plot", "all:"+p("a.svg"))
	if code != 0 {
		t.Fatalf("all: exit %d: %s", code, errs)
	}
	for name, want := range map[string]bool{"a.svg": true, "a-percentiles.svg": true, "a-blocks.svg": true, "a-rate.svg": false} {
		if _, err := os.Stat(p(name)); (err == nil) != want {
			t.Errorf("all: %s written: %v, want %v", name, err == nil, want)
		}
	}
	code, _, errs = dbsock(t, "report", report, "--plot", "percentil:"+p("x.png"))
	if code != ExitUsage || !strings.Contains(errs, `"percentil" is not a picture`) {
		t.Errorf("a mistyped picture: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(p("x.png")); err == nil {
		t.Error("a mistyped picture was drawn")
	}
}
