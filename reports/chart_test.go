package reports

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

func report(t *testing.T) *results.Report {
	t.Helper()
	r := &results.Report{Targets: []results.Target{{Name: "redis", Server: drivers.ServerInfo{Product: "Redis", Version: "7.0.15"}}}}
	for round := 1; round <= 3; round++ {
		for _, tr := range drivers.Transports {
			h := results.NewHistogram()
			base := int64(10000)
			if tr == drivers.Unix {
				base = 7000
			}
			for i := int64(0); i < 1000; i++ {
				_ = h.RecordValue(base + i*int64(round)*7)
			}
			enc, _ := results.EncodeHistogram(h)
			r.Runs = append(r.Runs, results.Run{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 1, ValueSize: 6}, Transport: tr, Round: round,
				N: 1000, Latency: results.LatencyOf(h), Histogram: enc, ElapsedNs: 1e7})
		}
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteSVGAndPNG(t *testing.T) {
	r := report(t)
	var svg bytes.Buffer
	if err := Plot(&svg, ".svg", r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "redis (Redis 7.0.15)", "TCP", "Unix", "99.9%", "Unix speedup at p50"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	path := filepath.Join(t.TempDir(), "r.png")
	if err := PlotFile(path, r); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
		t.Fatalf("PNG is %v, too small to read", b)
	}
}

func TestRejectsUnknownExtensionAndEmptyReport(t *testing.T) {
	if err := CheckPlotPath("r.gif"); err == nil {
		t.Fatal("r.gif accepted")
	}
	if err := Plot(&bytes.Buffer{}, ".svg", &results.Report{}); err == nil || !strings.Contains(err.Error(), "nothing to plot") {
		t.Fatalf("empty report: %v", err)
	}
}
