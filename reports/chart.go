// Plots: a report drawn as one picture for a blog post: per target,
// latency by percentile for TCP and Unix (log scales), and a bar chart of
// the Unix speedup with its confidence interval, with gonum.org/v1/plot.

package reports

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// Colors of the two transports, the same in every panel.
var (
	colorTCP  = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	colorUnix = color.RGBA{R: 0x1b, G: 0x6f, B: 0xb5, A: 0xff}
)

// ImageFormats lists the image formats by extension.
var ImageFormats = []string{".svg", ".png"}

// CheckPlotPath says whether path has an image extension dbsock can write.
func CheckPlotPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range ImageFormats {
		if ext == f {
			return nil
		}
	}
	return fmt.Errorf("plot file %q must end in .svg or .png", path)
}

// Plot draws r to w as ext (".svg" or ".png"). A report whose figures
// cannot be drawn (gonum/plot panics on a log axis with nothing above 0)
// is an error, never a panic, so that the other outputs are still written.
func Plot(w io.Writer, ext string, r *results.Report) error {
	return PlotContext(context.Background(), w, ext, r)
}

// PlotContext is Plot that stops between its panels once ctx ends (an
// interrupt), with ctx's error.
func PlotContext(ctx context.Context, w io.Writer, ext string, r *results.Report) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the figures cannot be drawn from this report (%v): too few results to plot", p)
		}
	}()
	all, err := panelsContext(ctx, plainCopy(r)) // gonum/plot escapes its SVG text
	if err != nil {
		return err
	}
	var plots []*plot.Plot
	for _, p := range all {
		if err := interrupted(ctx); err != nil {
			return err
		}
		if drawable(p) {
			plots = append(plots, p)
		}
	}
	if len(plots) == 0 {
		return fmt.Errorf("nothing to plot: the report's results are too few to draw")
	}
	cols := 2
	if len(plots) == 1 {
		cols = 1
	}
	rows := (len(plots) + cols - 1) / cols
	width, height := vg.Length(cols)*5.5*vg.Inch, vg.Length(rows)*3.6*vg.Inch
	var canvas vg.CanvasWriterTo
	switch ext {
	case ".svg":
		// The fonts go with the picture: text is laid out with their metrics,
		// and a browser without them would draw wider glyphs past the
		// panels (a clipped title).
		canvas = vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(144))}
	default:
		return fmt.Errorf("unknown image format %q", ext)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Inch / 4, PadY: vg.Inch / 4,
		PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	for i, p := range plots {
		if err := interrupted(ctx); err != nil {
			return err
		}
		p.Draw(tiles.At(dc, i%cols, i/cols))
	}
	_, err = canvas.WriteTo(w)
	return err
}

// drawable says whether p draws: gonum/plot panics on a log axis whose
// data leave it no range above 0 (one op, a case that failed early), and
// such a panel is left out rather than lose the rest.
func drawable(p *plot.Plot) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	p.Draw(draw.New(vgimg.New(4*vg.Inch, 3*vg.Inch)))
	return true
}

// panels builds, in order: the speedup bar chart (the headline), block
// p50 over the run, one percentile plot per summary, and the speedup
// against each swept dimension.
func panels(r *results.Report) ([]*plot.Plot, error) {
	return panelsContext(context.Background(), r)
}

// panelsContext is panels that stops between cases once ctx ends.
func panelsContext(ctx context.Context, r *results.Report) ([]*plot.Plot, error) {
	if len(r.Summary) == 0 {
		return nil, fmt.Errorf("nothing to plot: the report has no complete results")
	}
	bars, err := speedupPlot(r)
	if err != nil {
		return nil, err
	}
	out := []*plot.Plot{bars}
	overTime, err := blocksPlot(r)
	if err != nil {
		return nil, err
	}
	if overTime != nil {
		out = append(out, overTime)
	}
	if parts := results.Decompose(r); len(parts) > 0 {
		p, err := decompositionPlot(parts)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for _, s := range r.Summary {
		if err := interrupted(ctx); err != nil {
			return nil, err
		}
		p, err := percentilePlot(r, s)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	for _, dim := range []dimension{bySize, byConcurrency, byPipeline} {
		p, err := sweepPlot(r, dim)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// dimension is one axis a sweep can vary.
type dimension struct {
	name  string
	label string
	value func(results.Case) float64
	tick  func(results.Case) string
	// rest is the case with this dimension blanked: cases that differ only
	// in it share a line.
	rest func(results.Case) results.Case
}

var (
	bySize = dimension{name: "value size", label: "value size (bytes, log scale)",
		value: func(c results.Case) float64 { return float64(c.ValueSize) },
		tick:  func(c results.Case) string { return results.FormatSize(c.ValueSize) },
		rest:  func(c results.Case) results.Case { c.ValueSize = 0; return c }}
	byPipeline = dimension{name: "pipeline depth", label: "lookups per round trip (log scale)",
		value: func(c results.Case) float64 { return float64(c.Lookups()) },
		tick:  func(c results.Case) string { return fmt.Sprint(c.Lookups()) },
		rest:  func(c results.Case) results.Case { c.Pipeline = 0; return c }}
	byConcurrency = dimension{name: "concurrency", label: "workers (log scale)",
		value: func(c results.Case) float64 { return float64(max(c.Concurrency, 1)) },
		tick:  func(c results.Case) string { return fmt.Sprint(max(c.Concurrency, 1)) },
		rest:  func(c results.Case) results.Case { c.Concurrency = 0; return c }}
)

// sweepPlot draws the p50 speedup against one swept dimension, one line per
// target and the rest of its case; nil when the dimension was not swept.
func sweepPlot(r *results.Report, dim dimension) (*plot.Plot, error) {
	values := map[float64]bool{}
	var ticks plot.ConstantTicks
	lines := map[results.Case]plotter.XYs{}
	var order []results.Case
	for _, s := range r.Summary {
		if v := dim.value(s.Case); !values[v] {
			values[v] = true
			ticks = append(ticks, plot.Tick{Value: v, Label: dim.tick(s.Case)})
		}
		k := dim.rest(s.Case)
		if _, ok := lines[k]; !ok {
			order = append(order, k)
		}
		lines[k] = append(lines[k], plotter.XY{X: dim.value(s.Case), Y: s.UnixSpeedupP50})
	}
	swept := false // a dimension is swept when one line has two points
	for _, xys := range lines {
		swept = swept || len(xys) > 1
	}
	if len(values) < 2 || !swept {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = "Unix speedup at p50 by " + dim.name
	p.X.Label.Text = dim.label
	p.Y.Label.Text = "speedup (×)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ticks
	p.Add(plotter.NewGrid())
	palette := []color.Color{colorUnix, colorTCP, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.Gray{Y: 0x40}}
	for i, k := range order {
		xys := lines[k]
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = palette[i%len(palette)], palette[i%len(palette)]
		line.Width = vg.Points(2)
		p.Add(line, points)
		p.Legend.Add(strings.ReplaceAll(shortLabel(k), " 0 B", ""), line)
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 0x70}
	p.Add(one)
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = false, true
	return p, nil
}

// percentileTicks label the x axis of a percentile plot, where x is
// 1/(1-q): 2 is the median, 100 the 99th percentile.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: ""}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
	{Value: 100, Label: "99%"}, {Value: 1000, Label: "99.9%"}, {Value: 10000, Label: "99.99%"},
	{Value: 100000, Label: "99.999%"},
}

func percentilePlot(r *results.Report, s results.Summary) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title(r, s)
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (µs, log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	lines := 0
	for _, t := range reportPaths(r) {
		h, err := results.Pooled(r, s.Case, t)
		if err != nil {
			return nil, err
		}
		xys := curve(h)
		if len(xys) < 2 {
			continue // a log axis needs a range (or the path was not measured): nothing to draw
		}
		lines++
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.Width = vg.Points(2)
		line.Color = pathColor(t)
		if t != drivers.TCP && t != drivers.Unix {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
		}
		p.Add(line)
		p.Legend.Add(t.Label(), line)
	}
	if lines == 0 {
		return nil, nil
	}
	return p, nil
}

// legendFloor is the lower bound of a log axis over data from lo to hi
// that leaves a band below lo free for a legend of rows entries inside the
// plot area.
func legendFloor(lo, hi float64, rows int) float64 {
	frac := math.Min(legendRow*float64(rows)+legendPad, 0.6) // of the axis's height
	if lo <= 0 || hi <= lo {
		lo, hi = math.Max(lo, 1e-9), math.Max(hi, 2*math.Max(lo, 1e-9))
	}
	return lo / math.Pow(hi/lo, frac/(1-frac))
}

// A legend entry's share of a panel's plot height, and the margin around
// the legend, as legendFloor reserves them.
const (
	legendRow = 0.075
	legendPad = 0.04
)

// curve samples h's percentile distribution at 200 points spaced evenly on
// the log x axis, stopping where the sample runs out of resolution.
func curve(h *hdrhistogram.Histogram) plotter.XYs {
	maxX := math.Min(1e5, float64(h.TotalCount()))
	const n = 200
	xys := make(plotter.XYs, 0, n+1)
	for i := 0; i <= n; i++ {
		x := math.Pow(maxX, float64(i)/n)
		q := 100 * (1 - 1/x)
		v := float64(h.ValueAtQuantile(q)) / 1e3
		if v <= 0 {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: v})
	}
	return xys
}

// speedupBars is the bar chart data: one bar per summary with its
// interval, drawn offset by x from the summary's place.
type speedupBars struct {
	center, lo, hi []float64
	x              float64
}

func (b speedupBars) Len() int                    { return len(b.center) }
func (b speedupBars) XY(i int) (float64, float64) { return float64(i) + b.x, b.center[i] }
func (b speedupBars) YError(i int) (float64, float64) {
	return b.center[i] - b.lo[i], b.hi[i] - b.center[i]
}

// comparedPaths are the paths r's cases compare with their baseline, in
// the order they first appear.
func comparedPaths(r *results.Report) []drivers.Transport {
	var out []drivers.Transport
	for _, s := range r.Summary {
		for _, c := range s.Comparisons {
			if !slices.Contains(out, c.Path) {
				out = append(out, c.Path)
			}
		}
	}
	if len(out) == 0 {
		out = []drivers.Transport{drivers.Unix}
	}
	return out
}

// speedupPlot draws every comparison of every case: one bar per case and
// path, the baseline's p50 over the path's, with its interval.
func speedupPlot(r *results.Report) (*plot.Plot, error) {
	p := plot.New()
	scope := "block pairs" // the interval's scope, as the report's method says
	if r.Config.Instances > 1 {
		scope = "server instances"
	}
	paths, base := comparedPaths(r), baseOf(r)
	p.Title.Text = "Unix speedup at p50 (TCP/Unix), 95% CI over " + scope
	if len(paths) > 1 || base != drivers.TCP {
		p.Title.Text = fmt.Sprintf("Speedup at p50 over %s (%s/path), 95%% CI over %s", base.Label(), base.Label(), scope)
	}
	p.Y.Label.Text = "speedup (×; dashed at 1.0: no difference)"
	p.Y.Tick.Marker = withOne{}
	names, bars := collectSpeedupBars(r, paths)
	p.Add(plotter.NewGrid())
	ymax := speedupYMax(bars)
	if len(paths) > 1 { // room above the bars for the legend, at the top
		ymax *= 1 + legendRow*float64(len(paths)) + legendPad
		p.Legend.Top = true
	}
	if err := addSpeedupBars(p, bars, paths, ymax); err != nil {
		return nil, err
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 0x70}
	p.Add(one)
	p.NominalX(names...)
	if len(names) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.Y.Min, p.Y.Max = 0, ymax
	return p, nil
}

// collectSpeedupBars are the speedup panel's case names and, per compared
// path, one bar per case (its p50 speedup and interval; nothing for a
// case without that comparison or a target that failed before any
// result).
func collectSpeedupBars(r *results.Report, paths []drivers.Transport) ([]string, []speedupBars) {
	var names []string
	bars := make([]speedupBars, len(paths))
	width := 0.8 / float64(len(paths)) // of the space between two cases, in data units
	for j := range bars {
		bars[j].x = (float64(j) - float64(len(paths)-1)/2) * width
	}
	failed, shown := map[string]bool{}, map[string]bool{}
	for _, t := range r.Targets {
		failed[t.Name] = t.Error != ""
	}
	for _, s := range r.Summary {
		name := caseName(r, s.Case)
		switch {
		case s.VerdictKind == results.NoResult:
			name += " (no result)"
		case failed[s.Target]:
			name += " (incomplete)"
		}
		shown[s.Target] = true
		names = append(names, name)
		for j, path := range paths {
			var c, lo, hi float64
			if cmp := s.ComparisonOf(path); cmp != nil {
				c, lo, hi = cmp.SpeedupP50, cmp.SpeedupP50, cmp.SpeedupP50
				if ci := cmp.SpeedupP50CI; ci != nil {
					c, lo, hi = ci.Center, ci.Lo, ci.Hi
				}
			}
			b := &bars[j]
			b.center, b.lo, b.hi = append(b.center, c), append(b.lo, lo), append(b.hi, hi)
		}
	}
	for _, t := range r.Targets {
		if failed[t.Name] && !shown[t.Name] { // failed before any result: a place without a bar
			names = append(names, t.Name+" (failed)")
			for j := range bars {
				b := &bars[j]
				b.center, b.lo, b.hi = append(b.center, 0), append(b.lo, 0), append(b.hi, 0)
			}
		}
	}
	return names, bars
}

// speedupYMax is the panel's top: above every bar, and above every
// whisker unless an interval from two rounds is enormous (then it runs
// off the top; the report has the numbers).
func speedupYMax(bars []speedupBars) float64 {
	ymax := 1.2
	for j := range bars {
		b := &bars[j]
		for _, c := range b.center {
			ymax = math.Max(ymax, c*1.3)
		}
		for i := range b.hi {
			ymax = math.Max(ymax, math.Min(b.hi[i]*1.05, 3*b.center[i]))
		}
	}
	return ymax
}

// addSpeedupBars draws each path's bars and whiskers (cut at ymax), with
// a legend entry per path when there are several.
func addSpeedupBars(p *plot.Plot, bars []speedupBars, paths []drivers.Transport, ymax float64) error {
	for j := range bars {
		b := bars[j]
		for i := range b.hi {
			b.hi[i] = math.Min(b.hi[i], ymax)
		}
		bc, err := plotter.NewBarChart(plotter.Values(b.center), barWidth(len(b.center), len(paths)))
		if err != nil {
			return err
		}
		bc.XMin = b.x
		bc.Color = pathColor(paths[j])
		bc.LineStyle.Width = 0
		errs, err := plotter.NewYErrorBars(b)
		if err != nil {
			return err
		}
		errs.LineStyle.Width = vg.Points(1.5)
		p.Add(bc, errs)
		if len(paths) > 1 {
			p.Legend.Add(paths[j].Label(), bc)
		}
	}
	return nil
}

// speedupData is about how wide the speedup panel's data area is: the
// panel's 5.5 inches less its Y axis, label and ticks.
const speedupData = 330 // points

// barWidth is the width of a bar among cases places of paths bars each:
// at most 28 points, and at most 80% of its share of a place, so that
// bars stay apart however many cases and client stacks a run has
// (collectSpeedupBars spreads a place's bars over 0.8 of it).
func barWidth(cases, paths int) vg.Length {
	share := speedupData / float64(max(cases, 1)) * 0.8 / float64(max(paths, 1))
	return vg.Points(math.Min(math.Min(28, 84/float64(max(paths, 1))), 0.8*share))
}

// reportPaths are the paths of r in its order: TCP, Unix, then the
// further ones (--paths).
func reportPaths(r *results.Report) []drivers.Transport {
	paths := []drivers.Transport{drivers.TCP, drivers.Unix}
	for _, t := range r.Config.Paths {
		if t != drivers.TCP && t != drivers.Unix {
			paths = append(paths, t)
		}
	}
	return paths
}

// pathColor is a path's color in every panel: TCP and Unix their own,
// each further path one of a palette that stays apart from both.
func pathColor(t drivers.Transport) color.Color {
	switch t {
	case drivers.TCP:
		return colorTCP
	case drivers.Unix:
		return colorUnix
	}
	further := []color.Color{color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, color.Gray{Y: 0x50}, color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
		color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, color.RGBA{R: 0x1b, G: 0x5e, B: 0x20, A: 0xff}}
	return further[max(slices.Index(drivers.AllPaths, t)-2, 0)%len(further)]
}

// decompositionPlot stacks each case's p50 per transport: kernel floor,
// the client stack's own round trip on top (Go's runtime), server work and
// protocol.
func decompositionPlot(parts []results.Decomposition) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Where the p50 goes (µs)"
	p.Y.Label.Text = "p50 (µs)"
	var names []string
	layers := [3]plotter.Values{}
	for _, d := range parts {
		name := d.Target
		if d.Stack != "" {
			name += "@" + d.Stack
		}
		names = append(names, fmt.Sprintf("%s %s", name, d.Transport))
		layers[0] = append(layers[0], d.Kernel/1e3)
		layers[1] = append(layers[1], math.Max(d.Client, 0)/1e3)
		layers[2] = append(layers[2], math.Max(d.Server, 0)/1e3)
	}
	colors := []color.Color{color.Gray{Y: 0x70}, colorUnix, colorTCP}
	labels := []string{"kernel floor", "Go client runtime", "server work and protocol"}
	if slices.ContainsFunc(parts, func(d results.Decomposition) bool { return d.Stack != "" }) {
		labels[1] = "the stack's client (Go: its runtime)"
	}
	var below *plotter.BarChart
	for i, vals := range layers {
		bc, err := plotter.NewBarChart(vals, vg.Points(18))
		if err != nil {
			return nil, err
		}
		bc.Color, bc.LineStyle.Width = colors[i], 0
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		p.Legend.Add(labels[i], bc)
	}
	p.Add(plotter.NewGrid())
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Min = 0
	return p, nil
}
