package reports

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// caseCounts are the runs every picture is checked at: 3, 10 and 20
// cases (targets from client stacks).
var caseCounts = []struct {
	targets []string
	stacks  int
}{
	{[]string{"redis", "postgres", "mysql"}, 1},
	{[]string{"redis", "postgres"}, 5},
	{[]string{"redis", "postgres", "mysql", "memcached"}, 5},
}

// writePicture draws kind of r and, when DBSOCK_PICTURES is a directory,
// keeps it there to look at.
func writePicture(t *testing.T, r *results.Report, kind PlotKind, ext, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := PlotKindContext(context.Background(), &buf, ext, kind, r); err != nil {
		t.Fatalf("%s %s: %v", name, kind, err)
	}
	if dir := os.Getenv("DBSOCK_PICTURES"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+"-"+string(kind)+ext), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestPostFigureAtEveryCount: the default picture is the speedups alone,
// 800 px wide, every bar labelled with its stack and library and its
// value, the stacks of a target fastest first.
func TestPostFigureAtEveryCount(t *testing.T) {
	for _, c := range caseCounts {
		r := stacksReport(t, c.targets, c.stacks)
		name := fmt.Sprintf("%d-cases", len(r.Summary))
		img, err := png.Decode(bytes.NewReader(writePicture(t, r, PlotSpeedup, ".png", name)))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 800 {
			t.Errorf("%s: %d px wide, want 800", name, b.Dx())
		}
		svg := string(writePicture(t, r, PlotSpeedup, ".svg", name))
		if strings.Contains(svg, "99.9%") || strings.Contains(svg, "Block p50") {
			t.Errorf("%s: the post's figure draws more than the speedups", name)
		}
		for _, s := range r.Summary {
			label := figureCaseLabel(r, s)
			if c.stacks > 1 && !strings.Contains(label, s.Client.Library+" "+s.Client.LibraryVersion) {
				t.Errorf("%s: the bar of %s from %q is labelled %q, without its library", name, s.Target, s.Stack, label)
			}
			if !strings.Contains(svg, plainText(label)) {
				t.Errorf("%s: no label %q in the figure", name, label)
			}
			if ci := s.Against(drivers.Unix).SpeedupP50CI; ci != nil && !strings.Contains(svg, speedupLabel(ci.Center, ci.Lo, ci.Hi, true)) {
				t.Errorf("%s: no value %q in the figure", name, speedupLabel(ci.Center, ci.Lo, ci.Hi, true))
			}
		}
		_, rows, _ := speedupFigure(r)
		for i := 1; i < len(rows.rows); i++ {
			a, b := rows.rows[i-1], rows.rows[i]
			if a.c > 0 && b.c > 0 && int(a.y+0.5) == int(b.y+0.5)+1 && a.c < b.c && sameTarget(r, a, b) {
				t.Errorf("%s: a row of %.2f× above one of %.2f×: not fastest first", name, a.c, b.c)
			}
		}
	}
}

// sameTarget says whether two bars of the figure are of one target (no
// header row between them: their rows are neighbours).
func sameTarget(r *results.Report, a, b speedupRow) bool { return a.y-b.y < 1.5 }

// TestIntervalsLeavingTheAxisAreMarked: an interval far wider than the
// others is cut at the axis, with an arrowhead where it leaves it, and its
// bounds still said in its label.
func TestIntervalsLeavingTheAxisAreMarked(t *testing.T) {
	r := stacksReport(t, []string{"redis", "postgres"}, 5)
	c := r.Summary[2].ComparisonOf(drivers.Unix)
	c.SpeedupP50CI.Hi, c.SpeedupP50CI.Lo = 9, 0.01
	_, rows, _ := speedupFigure(r)
	cuts := 0
	for i, row := range rows.rows {
		below, above := rows.cut(i)
		if row.hi > rows.wmax != above || row.c > 0 && row.lo < rows.wmin != below {
			t.Errorf("row %d (%.2f–%.2f on an axis cut at %.2f–%.2f): cut below %v, above %v", i, row.lo, row.hi, rows.wmin, rows.wmax, below, above)
		}
		if below || above {
			cuts++
			if row.hi != 9 || !strings.Contains(row.label, "0.01–9.00") {
				t.Errorf("row %d is cut, but is not the wide interval: %+v", i, row)
			}
		}
	}
	if cuts != 1 || rows.wmax >= 9 || rows.xmax >= 9 {
		t.Errorf("%d rows cut, axis to %.2f: want the wide interval cut, the axis kept to the others", cuts, rows.xmax)
	}
	arrows := func(r *results.Report) int { // filled triangles in the SVG: the arrowheads
		writePicture(t, r, PlotSpeedup, ".png", fmt.Sprintf("cut%d", len(r.Stacks)))
		svg := string(writePicture(t, r, PlotSpeedup, ".svg", fmt.Sprintf("cut%d", len(r.Stacks))))
		return strings.Count(svg, "fill:#202020")
	}
	plain := stacksReport(t, []string{"redis", "postgres"}, 5)
	plain.Stacks = plain.Stacks[:1]
	if got, without := arrows(r), arrows(plain); got != without+2 {
		t.Errorf("the figure has %d arrowheads, %d without the wide interval: want 2 more (one at each end)", got, without)
	}
}

// TestPanelsShareTheirScale: every picture of several panels puts them on
// one latency scale, in a unit that fits its numbers.
func TestPanelsShareTheirScale(t *testing.T) {
	for _, c := range caseCounts {
		r := stacksReport(t, c.targets, c.stacks)
		name := fmt.Sprintf("%d-cases", len(r.Summary))
		for _, kind := range []PlotKind{PlotPercentiles, PlotBlocks} {
			ps, err := kindPanels(context.Background(), r, kind)
			if err != nil {
				t.Fatal(err)
			}
			checkShared(t, name+" "+string(kind), ps, "µs")
			writePicture(t, r, kind, ".png", name)
		}
	}
}

func checkShared(t *testing.T, what string, ps []*panel, unit string) {
	t.Helper()
	if len(ps) == 0 {
		t.Fatalf("%s: no panels", what)
	}
	for _, p := range ps {
		if p.Y.Min != ps[0].Y.Min || p.Y.Max != ps[0].Y.Max {
			t.Errorf("%s: panel %q spans %g–%g, the first %g–%g", what, p.Title.Text, p.Y.Min, p.Y.Max, ps[0].Y.Min, ps[0].Y.Max)
		}
		if !strings.Contains(p.Y.Label.Text, "("+unit+",") {
			t.Errorf("%s: panel %q's axis %q, want it in %s", what, p.Title.Text, p.Y.Label.Text, unit)
		}
	}
}

// rateReport is a run at load: redis from Go at three rates, its p50s
// from 52 µs to 129 ms (the generator falling behind at the top).
func rateReport() *results.Report {
	r := &results.Report{Targets: []results.Target{{Name: "redis"}, {Name: "postgres"}}}
	for ti, target := range []string{"redis", "postgres"} {
		for i, rate := range []float64{1000, 4000, 16000} {
			s := results.Summary{Case: results.Case{Target: target, Scenario: "pk", Concurrency: 16, Rate: rate}}
			for _, p := range []drivers.Transport{drivers.TCP, drivers.Unix} {
				p50 := []int64{52_000, 310_000, 128_974_800}[i] * int64(ti+1)
				if p == drivers.Unix {
					p50 = p50 * 3 / 4
				}
				s.Sides = append(s.Sides, results.PathSide{Path: p, Side: results.Side{N: 1000, Latency: results.Latency{Min: p50 / 2, P50: p50, P99: 4 * p50, P999: 5 * p50},
					Generator: &results.Generator{OfferedRate: rate, AchievedRate: rate * 0.99}}})
			}
			r.Summary = append(r.Summary, s)
		}
	}
	return r
}

// TestLatencyAgainstRate: at load, p50 and p99 of each path against the
// offered rate, panels on one scale in a unit that fits (ms here, never
// "128974.8 µs"), and the objective with each path's highest rate within
// it where the report has one.
func TestLatencyAgainstRate(t *testing.T) {
	r := rateReport()
	ps, err := kindPanels(context.Background(), r, PlotRate)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("%d panels, want one per target", len(ps))
	}
	checkShared(t, "rate", ps, "ms")
	svg := string(writePicture(t, r, PlotRate, ".svg", "rate"))
	if strings.Contains(svg, "128974") {
		t.Error("a latency in a unit that does not fit it")
	}
	writePicture(t, r, PlotRate, ".png", "rate")
	slo, err := results.ParseSLO("p99<2ms")
	if err != nil {
		t.Fatal(err)
	}
	r.Config.SLO = &slo
	r.Objectives = results.EvaluateSLO(r.Summary, slo, drivers.TCP)
	svg = string(writePicture(t, r, PlotRate, ".svg", "rate-objective"))
	writePicture(t, r, PlotRate, ".png", "rate-objective")
	for _, want := range []string{"objective p99 &lt; 2ms", "Unix: highest rate within (4,000/s)", "TCP: highest rate within (1,000/s)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the rate picture lacks %q", want)
		}
	}
	if err := PlotKindContext(context.Background(), &bytes.Buffer{}, ".svg", PlotRate, stacksReport(t, []string{"redis"}, 1)); err == nil || !strings.Contains(err.Error(), "--rate") {
		t.Errorf("a run at no rate drew a rate picture, or said nothing of --rate: %v", err)
	}
}

// TestUnitsFitTheNumbers: a latency reads in the unit that keeps it
// between 1 and 1000, to three figures.
func TestUnitsFitTheNumbers(t *testing.T) {
	for ns, want := range map[float64]string{950: "950 ns", 18_700: "18.7 µs", 128_974_800: "129 ms", 1_500_000_000: "1.50 s", 52_000: "52.0 µs"} {
		if got := fmtLatency(ns); got != want {
			t.Errorf("fmtLatency(%g) = %q, want %q", ns, got, want)
		}
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{9000, 400_000, "µs"}, {26_000, 515_899_200, "ms"}, {300, 2000, "ns"}, {40_000, 3_000_000_000, "ms"}} {
		if got := axisUnit(c.lo, c.hi).name; got != c.want {
			t.Errorf("an axis over %g–%g ns in %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// TestParsePlot: --plot takes a picture's name before its file.
func TestParsePlot(t *testing.T) {
	for spec, want := range map[string]string{"post.png": "speedup post.png", "percentiles:p.svg": "percentiles p.svg",
		"all:out/post.svg": "all out/post.svg", "./a:b.png": "speedup ./a:b.png"} {
		kind, path, err := ParsePlot(spec)
		if err != nil || string(kind)+" "+path != want {
			t.Errorf("ParsePlot(%q) = %s %s, %v; want %s", spec, kind, path, err, want)
		}
	}
	for _, bad := range []string{"percentile:p.png", "speedup:", "rate:r.gif", "dir:x/post.png"} {
		if _, _, err := ParsePlot(bad); err == nil {
			t.Errorf("ParsePlot(%q) accepted", bad)
		}
	}
	if got := BesidePath("out/post.png", PlotBlocks); got != "out/post-blocks.png" {
		t.Errorf("beside: %s", got)
	}
}
