package main

import (
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestHTMLReportInABrowser writes an HTML report from a real run and has a
// headless Chromium render it: the screenshot must not be blank, and the
// page the browser built must name every target.
func TestHTMLReportInABrowser(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	code, _, errs := dbsock(t, "run", "echo", "redis", "--provider", "local", "--n", "300", "--warmup", "30", "--instances", "2", "-q", "--out", page)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"<script", "src=\"http", "href=\"http", "<link"} {
		if strings.Contains(string(b), banned) {
			t.Fatalf("the page is not self-contained: it holds %q", banned)
		}
	}
	shot := filepath.Join(dir, "r.png")
	browser := func(args ...string) string {
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile")}
		out, err := exec.Command("chromium", append(base, args...)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return string(out)
	}
	browser("--window-size=1200,1600", "--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	inked, total := 0, 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				inked++
			}
		}
	}
	if inked*100 < total { // less than 1% of the page drawn
		t.Fatalf("the rendered page is blank: %d of %d sampled pixels inked", inked, total)
	}
	dom := browser("--dump-dom", "file://"+page)
	for _, want := range []string{"<td>echo</td>", "<td>redis</td>", "<svg", "Details"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page Chromium rendered lacks %q", want)
		}
	}
}
