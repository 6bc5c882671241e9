package reports

import (
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// rateSweep is a run of redis at 16,000, 8,000, 2,000 and 4,000/s (in the
// order a list gave them), the socket's speedup largest at 2,000/s, each
// case's verdict kind; its environment and start are a real machine's.
func rateSweep(kinds ...results.VerdictKind) *results.Report {
	r := &results.Report{Targets: []results.Target{{Name: "redis"}}, StartedAt: time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC)}
	r.Environment.CPUModel, r.Environment.NumCPU = "AMD EPYC", 2
	for i, rate := range []float64{16000, 8000, 2000, 4000} {
		speed := []float64{1.05, 1.10, 1.30, 1.20}[i]
		s := results.Summary{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 1, ValueSize: 6, Rate: rate},
			Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{N: 100}}, {Path: drivers.Unix, Side: results.Side{N: 100}}},
			Comparisons: []results.Comparison{{Path: drivers.Unix, Baseline: drivers.TCP, SpeedupP50: speed, VerdictKind: kinds[i%len(kinds)],
				SpeedupP50CI: &results.Interval{Center: speed, Lo: speed - 0.02, Hi: speed + 0.02}}}}
		r.Summary = append(r.Summary, s)
	}
	return r
}

// TestSpeedupRowsOfASweepInNumericOrder: the rows of a rate list are in
// numeric order (2,000, 4,000, 8,000, 16,000/s), whatever order the list
// ran in and whichever was fastest, each named by its rate.
func TestSpeedupRowsOfASweepInNumericOrder(t *testing.T) {
	r := rateSweep(results.UnixFaster)
	_, byTarget := speedupEntries(r, []drivers.Transport{drivers.Unix})
	var got []string
	for _, e := range byTarget["redis"] {
		got = append(got, e.label)
	}
	if want := "2,000/s 4,000/s 8,000/s 16,000/s"; strings.Join(got, " ") != want {
		t.Errorf("rows %q, want %s", got, want)
	}
}

// TestUndecidedBarsAreNoResult: a bar whose verdict is no result to read
// (no winner where the generator fell behind, undecided, too few
// instances) is drawn hollow and grey and says why beside its value; a
// winner's and a no-difference bar are filled; the key says what a hollow
// bar is.
func TestUndecidedBarsAreNoResult(t *testing.T) {
	r := rateSweep(results.FellBehind, results.Undecided, results.UnixFaster, results.NoDifference)
	p, rows, _ := speedupFigure(r)
	want := map[float64]string{1.05: "no winner, the generator fell behind", 1.10: "undecided", 1.30: "", 1.20: ""}
	for _, b := range rows.rows {
		note, ok := want[b.c]
		if !ok {
			continue
		}
		if b.decided != (note == "") || note != "" && !strings.HasSuffix(b.label, ": "+note) {
			t.Errorf("the bar of %.2f× is decided %v, labelled %q; want decided %v and %q said", b.c, b.decided, b.label, note == "", note)
		}
	}
	if len(p.key) != 1 || !strings.HasPrefix(p.key[0].name, "no result to read") {
		t.Errorf("key %+v, want one entry saying what a hollow bar is", p.key)
	}
	svg := string(writePicture(t, r, PlotSpeedup, ".svg", "undecided"))
	writePicture(t, r, PlotSpeedup, ".png", "undecided")
	if !strings.Contains(svg, "1.05× (1.03–1.07): no winner, the generator fell behind") {
		t.Error("the picture does not say why a bar is no result")
	}
}

// TestEveryPictureKeysOutsideItsData: no panel of any picture draws a
// legend over its data: its key is drawn in rows under its title, in a
// band the data does not reach.
func TestEveryPictureKeysOutsideItsData(t *testing.T) {
	r := stacksReport(t, []string{"redis", "postgres"}, 3)
	ps, err := panels(r)
	if err != nil {
		t.Fatal(err)
	}
	rates, err := ratePanels(rateReport())
	if err != nil {
		t.Fatal(err)
	}
	keyed := 0
	for _, p := range append(ps, rates...) {
		c := draw.New(vgimgCanvas())
		if h := p.Legend.Rectangle(c).Size().Y; h != 0 {
			t.Errorf("panel %q draws a legend over its data (%v high)", p.Title.Text, h)
		}
		if len(p.key) == 0 {
			continue
		}
		keyed++
		rows, top, _ := p.layout(c)
		bottom := top - vg.Length(len(rows))*p.keyRowHeight()
		if data := p.DataCanvas(c); data.Max.Y > bottom {
			t.Errorf("panel %q: its data reaches %v, over its key's rows, down to %v", p.Title.Text, data.Max.Y, bottom)
		}
	}
	if keyed < 3 {
		t.Errorf("%d panels with a key, want the speedups, percentiles, blocks and rate panels'", keyed)
	}
}

// TestBlockNamesOverTheData: the blocks picture names each target's
// stretch over the data, on a row of its own where two names would run
// into each other, and keeps that band free over the points.
func TestBlockNamesOverTheData(t *testing.T) {
	font := draw.TextStyle{Font: plot.DefaultFont, Handler: plot.DefaultTextHandler}
	font.Font.Size = vg.Points(10)
	x := func(v float64) vg.Length { return vg.Length(v) }
	apart := []*span{{name: "redis", lo: 0, hi: 100}, {name: "postgres", lo: 200, hi: 300}}
	close := []*span{{name: "redis", lo: 0, hi: 10}, {name: "postgres", lo: 14, hi: 20}, {name: "mysql", lo: 60, hi: 70}}
	if got := nameLevels(apart, x, font); got[0] != 0 || got[1] != 0 {
		t.Errorf("names far apart on rows %v, want one row", got)
	}
	if got := nameLevels(close, x, font); got[0] != 0 || got[1] != 1 || got[2] != 0 {
		t.Errorf("names close together on rows %v, want 0, 1, 0", got)
	}
	ps, err := blockPanels(stacksReport(t, []string{"redis", "postgres"}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].top <= 0 {
		t.Error("the blocks panel keeps no band over its data for the names")
	}
}

// TestPicturesSayTheMachineAndTheDate: every picture's caption names the
// machine (CPU model, logical CPUs) and the run's date.
func TestPicturesSayTheMachineAndTheDate(t *testing.T) {
	r := rateSweep(results.UnixFaster)
	want := "measured on AMD EPYC, 2 logical CPUs; run of 2026-12-01 23:30 UTC"
	if got := captionOf(r); !strings.HasPrefix(got, want) {
		t.Errorf("caption %q, want it to start %q", got, want)
	}
	for _, kind := range []PlotKind{PlotSpeedup, PlotPercentiles, PlotBlocks} {
		r := stacksReport(t, []string{"redis"}, 2)
		r.Environment.CPUModel, r.Environment.NumCPU, r.StartedAt = "AMD EPYC", 2, time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC)
		if svg := string(writePicture(t, r, kind, ".svg", "caption")); !strings.Contains(svg, want) {
			t.Errorf("the %s picture has no caption %q", kind, want)
		}
	}
}

// TestTitlesWrapToTheirPanel: a title wider than its panel is broken
// between words, no line wider than the panel.
func TestTitlesWrapToTheirPanel(t *testing.T) {
	p := newPanel()
	panelFonts(p.Plot)
	long := "Block p50 over the run: Go 1.26.8 (github.com/redis/go-redis/v9 v9.23.0), a goroutine per connection"
	width := 3.5 * vg.Inch
	for _, line := range strings.Split(wrapText(p.Title.TextStyle, long, width), "\n") {
		if w := p.Title.TextStyle.Width(line); w > width {
			t.Errorf("line %q is %v wide, the panel %v", line, w, width)
		}
	}
	if got := figureCaseLabel(&results.Report{Config: results.Config{Clients: []string{"go"}}},
		results.Summary{Case: results.Case{Target: "redis"}, Client: &results.Client{Language: "go", RuntimeVersion: "go1.26.8",
			Library: "github.com/redis/go-redis/v9", LibraryVersion: "v9.23.0"}}); got != "Go 1.26.8 (go-redis v9.23.0)" {
		t.Errorf("a Go stack's row is named %q, want its library by its short name", got)
	}
}

// vgimgCanvas is a canvas of a panel's size in a picture of one column.
func vgimgCanvas() vg.CanvasSizer { return vgimg.New(figureWidth, panelHeight(1)) }
