package reports

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"slices"
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
				N: 1000, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 1e7}, Histogram: enc})
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
	for _, want := range []string{"<svg", "redis (Redis 7.0.15)", "Unix speedup at p50"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	var pct bytes.Buffer
	if err := PlotKindContext(context.Background(), &pct, ".svg", PlotPercentiles, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TCP", "Unix", "99.9%"} {
		if !strings.Contains(pct.String(), want) {
			t.Errorf("the percentiles' SVG lacks %q", want)
		}
	}
	var buf bytes.Buffer
	if err := Plot(&buf, ".png", r); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() < 200 {
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

// titles lists the panel titles of r's plot.
func titles(t *testing.T, r *results.Report) []string {
	t.Helper()
	ps, err := panels(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Title.Text)
	}
	return out
}

func TestPanelsFollowTheData(t *testing.T) {
	has := func(list []string, prefix string) bool {
		for _, s := range list {
			if strings.HasPrefix(s, prefix) {
				return true
			}
		}
		return false
	}
	plain := titles(t, report(t))
	if has(plain, "Block p50 over the run") || has(plain, "Unix speedup at p50 by") {
		t.Fatalf("a report without blocks or sweep drew %q", plain)
	}
	// Two targets with their own default sizes are not a value-size sweep.
	two := fixture(t)
	other := two.Runs[0]
	other.Target, other.ValueSize = "echo", 4
	other2 := two.Runs[1]
	other2.Target, other2.ValueSize = "echo", 4
	two.Runs = append(two.Runs, other, other2)
	if err := two.Summarize(); err != nil {
		t.Fatal(err)
	}
	got := titles(t, two)
	if !has(got, "Block p50 over the run") || has(got, "Unix speedup at p50 by value size") {
		t.Fatalf("blocks without a sweep: panels %q; want the block panel and no sweep panel", got)
	}
	// The same target at two sizes is.
	sweep := fixture(t)
	for _, run := range fixture(t).Runs {
		run.ValueSize = 1024
		sweep.Runs = append(sweep.Runs, run)
	}
	if err := sweep.Summarize(); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, sweep); !has(got, "Unix speedup at p50 by value size") {
		t.Fatalf("a value-size sweep drew %q", got)
	}
}

// TestThinReportsDrawWhatTheyCan: one op per transport gives a percentile
// curve of one point, which a log axis cannot draw: the plot leaves that
// panel out instead of panicking, and the HTML page of a report with no
// runs is still written.
func TestThinReportsDrawWhatTheyCan(t *testing.T) {
	r := &results.Report{Targets: []results.Target{{Name: "echo"}}}
	for _, tr := range drivers.Transports {
		h := results.NewHistogram()
		_ = h.RecordValue(100000)
		enc, _ := results.EncodeHistogram(h)
		r.Runs = append(r.Runs, results.Run{Case: results.Case{Target: "echo", Scenario: "pk", Concurrency: 1, ValueSize: 4}, Transport: tr, Round: 1,
			N: 1, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 1e5}, Histogram: enc,
			Blocks: []results.Block{{Pair: 0, StartNs: 1e6, ElapsedNs: 1e5, N: 1, P50: 100000, Mean: 1e5, P99: 100000}}})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Plot(&b, ".png", r); err != nil {
		t.Fatalf("a one-op report: %v", err)
	}
	empty := &results.Report{SchemaVersion: results.SchemaVersion}
	b.Reset()
	if err := HTML(&b, empty); err != nil || !strings.Contains(b.String(), "<html") {
		t.Fatalf("a report with no runs: %v", err)
	}
}

// TestSpeedupTitleSaysTheIntervalsScope: the speedup panel's title names
// what its interval is over, as the report's method does: block pairs
// within one server instance, or server instances; and that there is
// none where no bar has one.
func TestSpeedupTitleSaysTheIntervalsScope(t *testing.T) {
	if got := titles(t, report(t)); !strings.HasPrefix(got[0], "Unix speedup at p50 (TCP/Unix), no 95% CI: too few block pairs") {
		t.Errorf("a figure of no interval is titled %q", got[0])
	}
	for instances, want := range map[int]string{1: "95% CI over block pairs", 9: "95% CI over server instances"} {
		r := fixture(t)
		r.Config.Instances = instances
		got := titles(t, r)
		found := false
		for _, title := range got {
			found = found || strings.HasPrefix(title, "Unix speedup at p50 (TCP/Unix), "+want)
		}
		if !found {
			t.Errorf("%d instances: titles %q; want one saying %q", instances, got, want)
		}
	}
}

// TestSpeedupAxisLabelsOne: the ratio axis labels 1 (no difference),
// whatever its range, every label with the same decimals (never "1.0, 1,
// 1.1"), four to nine of them; and says what the dashed line is (no
// legend over the bars).
func TestSpeedupAxisLabelsOne(t *testing.T) {
	for _, r := range [][2]float64{{0, 1.2}, {0, 1.56}, {0, 3.7}, {0, 12}, {0.69, 1.13}, {0.9, 1.1}, {0.94, 1.26}, {0.5, 3.6}} {
		ticks := (ratioTicks{}).Ticks(r[0], r[1])
		found, decimals := false, -1
		for _, tk := range ticks {
			found = found || (tk.Value == 1 && strings.TrimRight(strings.TrimRight(tk.Label, "0"), ".") == "1")
			d := 0
			if i := strings.IndexByte(tk.Label, '.'); i >= 0 {
				d = len(tk.Label) - i - 1
			}
			if decimals >= 0 && d != decimals {
				t.Errorf("axis %v: labels of %d and %d decimals: %v", r, decimals, d, ticks)
			}
			decimals = d
		}
		if !found || len(ticks) < 4 || len(ticks) > 9 {
			t.Errorf("axis %v: %d ticks %v; want 4 to 9, one labelled 1 at 1", r, len(ticks), ticks)
		}
	}
	p, _, _ := speedupFigure(report(t))
	if !strings.Contains(p.X.Label.Text, "dashed at 1.0") {
		t.Errorf("the axis does not say what the dashed line is: %q", p.X.Label.Text)
	}
}

// TestLogTicksLabelEveryAxis: a log axis of any span gets at least two
// labelled ticks (a 14–90 µs axis got none at all).
func TestLogTicksLabelEveryAxis(t *testing.T) {
	for _, r := range [][2]float64{{14, 90}, {14, 1500}, {9.5, 31}, {150, 4000}, {0.8, 3}} {
		var labels []string
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if tk.Value < r[0] || tk.Value > r[1] {
				t.Errorf("axis %v: tick %v outside it", r, tk.Value)
			}
		}
		if len(labels) < 2 {
			t.Errorf("axis %v: labels %q, want at least two", r, labels)
		}
	}
}

// TestChartShowsFailedTargetsAndEveryPath: a target that failed keeps its
// place in the speedup panel, named as failed; a further path gets its
// own line and legend entry in the percentile panel.
func TestChartShowsFailedTargetsAndEveryPath(t *testing.T) {
	r := report(t)
	r.Targets = append(r.Targets, results.Target{Name: "mysql", Error: "start mysql: no server"})
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.TCP6, drivers.Unix}
	for round := 1; round <= 3; round++ {
		h := results.NewHistogram()
		for i := int64(0); i < 1000; i++ {
			_ = h.RecordValue(9000 + i*int64(round)*7)
		}
		enc, _ := results.EncodeHistogram(h)
		r.Runs = append(r.Runs, results.Run{Case: r.Runs[0].Case, Transport: drivers.TCP6, Round: round, N: 1000, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 1e7}, Histogram: enc})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := Plot(&svg, ".svg", r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mysql (failed)", ">TCP6<"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}

// TestSpeedupPanelDrawsEveryComparison: with three paths the speedup
// panel draws both comparisons (Unix and TCP6 against TCP), each named in
// its legend; with a baseline other than TCP, its title says which.
func TestSpeedupPanelDrawsEveryComparison(t *testing.T) {
	r := report(t)
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.TCP6, drivers.Unix}
	for round := 1; round <= 3; round++ {
		h := results.NewHistogram()
		for i := int64(0); i < 1000; i++ {
			_ = h.RecordValue(9000 + i*int64(round)*7)
		}
		enc, _ := results.EncodeHistogram(h)
		r.Runs = append(r.Runs, results.Run{Case: r.Runs[0].Case, Transport: drivers.TCP6, Round: round, N: 1000, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 1e7}, Histogram: enc})
	}
	for _, base := range []drivers.Transport{"", drivers.TCP6} {
		r.Config.Baseline = base
		if err := r.Summarize(); err != nil {
			t.Fatal(err)
		}
		want := []drivers.Transport{drivers.Unix, drivers.TCP6}
		title := "Speedup at p50 over TCP (TCP/path)"
		if base == drivers.TCP6 {
			want, title = []drivers.Transport{drivers.TCP, drivers.Unix}, "Speedup at p50 over TCP6 (TCP6/path)"
		}
		if got := comparedPaths(r); !slices.Equal(got, want) {
			t.Errorf("baseline %q: the panel draws %v, want %v", base, got, want)
		}
		p, _, _ := speedupFigure(r)
		if !strings.HasPrefix(p.Title.Text, title) {
			t.Errorf("baseline %q: title %q, want it to start with %q", base, p.Title.Text, title)
		}
		var svg bytes.Buffer
		if err := Plot(&svg, ".svg", r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(svg.String(), title) {
			t.Errorf("baseline %q: the chart lacks the panel %q", base, title)
		}
	}
}

// Every path of the table has a color of its own in the charts.
func TestPathColorsDistinct(t *testing.T) {
	seen := map[color.Color]drivers.Transport{}
	for _, p := range drivers.AllPaths {
		c := pathColor(p)
		if other, ok := seen[c]; ok {
			t.Errorf("paths %s and %s share the color %v", other, p, c)
		}
		seen[c] = p
	}
}

// TestBarsStayApart: the bars of one row (one per compared path) and of
// neighbouring rows never touch, whatever the paths.
func TestBarsStayApart(t *testing.T) {
	for paths := 1; paths <= 6; paths++ {
		gap := 0.8 / float64(paths) * float64(rowPitch(paths).Points()) // between two bars' centres
		if thick := barThick(paths).Points(); thick >= gap || thick <= 0 {
			t.Errorf("%d paths: bars %.1f points thick, %.1f points apart", paths, thick, gap)
		}
	}
}
