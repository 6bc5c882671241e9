// Plots: a report drawn as one picture for a blog post: per target,
// latency by percentile for TCP and Unix (log scales), and a bar chart of
// the Unix speedup with its confidence interval, with gonum.org/v1/plot.

package reports

import (
	"cmp"
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

// PlotContext is Plot that stops once ctx ends (an interrupt), with
// ctx's error: the post's figure, the speedups (PlotSpeedup).
func PlotContext(ctx context.Context, w io.Writer, ext string, r *results.Report) error {
	return PlotKindContext(ctx, w, ext, PlotSpeedup, r)
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

// panels are every picture's panels, the post's figure first (for
// tests that read them all).
func panels(r *results.Report) ([]*panel, error) {
	if len(r.Summary) == 0 {
		return nil, fmt.Errorf("nothing to plot: the report has no complete results")
	}
	p, _, _ := speedupFigure(r)
	out := []*panel{p}
	for _, kind := range PlotKinds[1 : len(PlotKinds)-1] {
		ps, err := kindPanels(context.Background(), r, kind)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
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
func sweepPlot(r *results.Report, dim dimension) (*panel, error) {
	values := map[float64]bool{}
	var ticks plot.ConstantTicks
	lines, decided := map[results.Case]plotter.XYs{}, map[results.Case]plotter.XYs{}
	var order []results.Case
	undecided := false
	for _, s := range r.Summary {
		if v := dim.value(s.Case); !values[v] {
			values[v] = true
			ticks = append(ticks, plot.Tick{Value: v, Label: dim.tick(s.Case)})
		}
		k := dim.rest(s.Case)
		if _, ok := lines[k]; !ok {
			order = append(order, k)
		}
		xy := plotter.XY{X: dim.value(s.Case), Y: s.Against(results.Socket()).SpeedupP50}
		lines[k] = append(lines[k], xy)
		if _, no := undecidedNotes[s.Against(results.Socket()).VerdictKind]; !no {
			decided[k] = append(decided[k], xy)
		} else {
			undecided = true
		}
	}
	for _, xys := range lines { // a line from point to point in numeric order
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	}
	swept := false // a dimension is swept when one line has two points
	for _, xys := range lines {
		swept = swept || len(xys) > 1
	}
	if len(values) < 2 || !swept {
		return nil, nil
	}
	p := newPanel()
	p.Title.Text = "Unix speedup at p50 by " + dim.name
	p.X.Label.Text = dim.label
	p.Y.Label.Text = "speedup (×); dashed at 1.0: no difference"
	p.Y.Tick.Marker = ratioTicks{}
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
		p.Add(line, points) // every point a ring; a point that is a result filled over it
		if len(decided[k]) > 0 {
			filled, err := plotter.NewScatter(decided[k])
			if err != nil {
				return nil, err
			}
			filled.GlyphStyle = draw.GlyphStyle{Color: palette[i%len(palette)], Radius: points.GlyphStyle.Radius, Shape: draw.CircleGlyph{}}
			p.Add(filled)
		}
		p.addKey(strings.ReplaceAll(shortLabel(k), " 0 B", ""), line)
	}
	if undecided {
		ring, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return nil, err
		}
		ring.GlyphStyle = draw.GlyphStyle{Color: undecidedInk, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
		p.addKey("ring: no result to read (undecided, or no interval)", ring)
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = color.Gray{Y: 0x70}
	p.Add(one)
	p.Y.Min = 0
	return p, nil
}

// percentileTicks label the x axis of a percentile plot, where x is
// 1/(1-q): 2 is the median, 100 the 99th percentile.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: ""}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
	{Value: 100, Label: "99%"}, {Value: 1000, Label: "99.9%"}, {Value: 10000, Label: "99.99%"},
	{Value: 100000, Label: "99.999%"},
}

func percentilePlot(r *results.Report, s results.Summary, u latUnit) (*panel, error) {
	p := newPanel()
	p.Title.Text = title(r, s)
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (" + u.name + ", log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	lines := 0
	for _, t := range reportPaths(r) {
		h, err := results.Pooled(r, s.Case, t)
		if err != nil {
			return nil, err
		}
		xys := curve(h, u)
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
		if t != results.DefaultBaseline() && t != results.Socket() {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
		}
		p.Add(line)
		p.addKey(t.Label(), line)
	}
	if lines == 0 {
		return nil, nil
	}
	return p, nil
}

// curve samples h's percentile distribution at 200 points spaced evenly on
// the log x axis, stopping where the sample runs out of resolution.
func curve(h *hdrhistogram.Histogram, u latUnit) plotter.XYs {
	maxX := math.Min(1e5, float64(h.TotalCount()))
	const n = 200
	xys := make(plotter.XYs, 0, n+1)
	for i := 0; i <= n; i++ {
		x := math.Pow(maxX, float64(i)/n)
		q := 100 * (1 - 1/x)
		v := float64(h.ValueAtQuantile(q)) / u.ns
		if v <= 0 {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: v})
	}
	return xys
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
		out = []drivers.Transport{results.Socket()}
	}
	return out
}

// reportPaths are the paths of r in its order: the default baseline (TCP),
// the socket, then the further ones (--paths).
func reportPaths(r *results.Report) []drivers.Transport {
	paths := []drivers.Transport{results.DefaultBaseline(), results.Socket()}
	for _, t := range r.Config.Paths {
		if !slices.Contains(paths[:2], t) {
			paths = append(paths, t)
		}
	}
	return paths
}

// pathColor is a path's color in every panel: TCP and Unix their own,
// each further path one of a palette that stays apart from both.
func pathColor(t drivers.Transport) color.Color {
	switch t {
	case results.DefaultBaseline():
		return colorTCP
	case results.Socket():
		return colorUnix
	}
	further := []color.Color{color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, color.Gray{Y: 0x50}, color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
		color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, color.RGBA{R: 0x1b, G: 0x5e, B: 0x20, A: 0xff},
		color.RGBA{R: 0xb2, G: 0x18, B: 0x2b, A: 0xff}, color.RGBA{R: 0x4a, G: 0x14, B: 0x86, A: 0xff}}
	return further[max(slices.Index(drivers.AllPaths, t)-2, 0)%len(further)]
}

// decompositionPlot stacks each case's p50 per transport: kernel floor,
// the client stack's own round trip on top (Go's runtime), server work and
// protocol.
func decompositionPlot(parts []results.Decomposition) (*panel, error) {
	p := newPanel()
	p.Title.Text = "Where the p50 goes (µs)"
	p.Y.Label.Text = "p50 (µs)"
	var names []string
	layers := [3]plotter.Values{}
	for _, d := range parts {
		name := d.Target
		if d.Stack != "" {
			name += "@" + d.Stack
		}
		if d.Placement != "" {
			name += " " + results.PlacementName(d.Placement)
		}
		names = append(names, fmt.Sprintf("%s %s", name, d.Transport.Label()))
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
		p.addKey(labels[i], bc)
	}
	p.Add(plotter.NewGrid())
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4 // the first and last bars drawn whole
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Y.Min = 0
	return p, nil
}
