package reports

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// The chart's block panel: every block's p50 over the run.

// span is one target's stretch of the run in the block panel.
type span struct {
	name   string
	lo, hi float64
	top    float64
}

// spanNames names each target's stretch of the run above the data, over
// a bracket from its first block to its last: in the band the panel keeps
// free over its data (panel.top), never among the points. Names too close
// to fit side by side take a row higher.
type spanNames struct {
	spans []*span
	font  draw.TextStyle
}

// nameLevels are the rows the spans' names take, each on the lowest row
// where it does not run into the name before it (x is where a time of the
// run is drawn).
func nameLevels(spans []*span, x func(float64) vg.Length, font draw.TextStyle) []int {
	levels := make([]int, len(spans))
	ends := []vg.Length{}
	for i, sp := range spans {
		if math.IsInf(sp.lo, 1) {
			continue
		}
		mid, w := (x(sp.lo)+x(sp.hi))/2, font.Width(sp.name)
		level := 0
		for level < len(ends) && mid-w/2 < ends[level]+vg.Points(6) {
			level++
		}
		if level == len(ends) {
			ends = append(ends, 0)
		}
		ends[level], levels[i] = mid+w/2, level
	}
	return levels
}

// spanNameRows is how many rows the spans' names take in a panel of two
// columns (the narrowest a panel is drawn).
func spanNameRows(spans []*span, font draw.TextStyle) int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, sp := range spans {
		lo, hi = math.Min(lo, sp.lo), math.Max(hi, sp.hi)
	}
	width := figureWidth/2 - 0.9*vg.Inch
	x := func(v float64) vg.Length {
		if hi <= lo {
			return 0
		}
		return vg.Length((v - lo) / (hi - lo) * float64(width))
	}
	rows := 1
	for _, l := range nameLevels(spans, x, font) {
		rows = max(rows, l+1)
	}
	return rows
}

// Plot implements plot.Plotter.
func (n spanNames) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	row := n.font.Font.Size * 1.5
	ink := draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(0.8)}
	levels := nameLevels(n.spans, trX, n.font)
	for i, sp := range n.spans {
		if math.IsInf(sp.lo, 1) {
			continue
		}
		lo, hi := trX(sp.lo), trX(sp.hi)
		y := c.Max.Y + vg.Points(3) + vg.Length(levels[i])*row
		c.StrokeLines(ink, []vg.Point{{X: lo, Y: y}, {X: hi, Y: y}})
		w := n.font.Width(sp.name) / 2 // the name over its bracket, within the panel
		mid := min(max((lo+hi)/2, c.Min.X+w), c.Max.X-w)
		c.FillText(n.font, vg.Point{X: mid, Y: y + vg.Points(2)}, sp.name)
	}
}

// blocksPlot draws every block's p50 of one client stack's runs against
// when it started, in unit u, TCP and Unix in their colors and noisy blocks ringed, with each target's name over its
// stretch of the run: drift and noisy periods show at a glance. nil when the
// report has no blocks.
func blocksPlot(r *results.Report, stack string, u latUnit) (*panel, error) {
	b := collectBlocks(r, stack, u)
	if len(b.series) == 0 {
		return nil, nil
	}
	p := newPanel()
	p.Title.Text = "Block p50 over the run"
	if len(r.Config.Clients) > 0 {
		p.Title.Text = "Block p50 over the run: " + stackTitle(r, stack)
	}
	p.X.Label.Text = "seconds since the start"
	p.Y.Label.Text = "block p50 (" + u.name + ", log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	if err := addBlockScatters(p, r, b); err != nil {
		return nil, err
	}
	names := spanNames{spans: b.spans, font: draw.TextStyle{Color: color.Gray{Y: 0x20}, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YBottom}}
	names.font.Font.Size = vg.Points(10)
	p.Add(names)
	p.top = vg.Length(spanNameRows(b.spans, names.font))*names.font.Font.Size*1.5 + vg.Points(4)
	p.Y.Min, p.Y.Max = p.Y.Min/1.15, p.Y.Max*1.3 // the blocks at the edges drawn whole
	return p, nil
}

// blockPoints are a run's blocks as points (seconds since the start, p50
// in µs): per path, the noisy ones again, and each target's stretch.
type blockPoints struct {
	series map[drivers.Transport]plotter.XYs
	noisy  plotter.XYs
	spans  []*span
}

// collectBlocks reads every block of r's runs, in the order they ran.
func collectBlocks(r *results.Report, stack string, u latUnit) blockPoints {
	b := blockPoints{series: map[drivers.Transport]plotter.XYs{}}
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Stack != stack {
			continue
		}
		if len(b.spans) == 0 || b.spans[len(b.spans)-1].name != run.Target {
			b.spans = append(b.spans, &span{name: run.Target, lo: math.Inf(1)})
		}
		sp := b.spans[len(b.spans)-1]
		for _, blk := range run.Blocks {
			if blk.P50 <= 0 {
				continue
			}
			xy := plotter.XY{X: float64(blk.StartNs) / 1e9, Y: float64(blk.P50) / u.ns}
			b.series[run.Transport] = append(b.series[run.Transport], xy)
			if blk.Noisy {
				b.noisy = append(b.noisy, xy)
			}
			sp.lo, sp.hi, sp.top = math.Min(sp.lo, xy.X), math.Max(sp.hi, xy.X), math.Max(sp.top, xy.Y)
		}
	}
	return b
}

// addBlockScatters draws each path's blocks as dots in its colour, and
// rings the noisy ones, with a legend entry each.
func addBlockScatters(p *panel, r *results.Report, b blockPoints) error {
	for _, t := range reportPaths(r) {
		if len(b.series[t]) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(b.series[t])
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = pathColor(t)
		sc.GlyphStyle.Radius = vg.Points(1.6)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
		p.addKey(t.Label(), sc)
	}
	if len(b.noisy) == 0 {
		return nil
	}
	ring, err := plotter.NewScatter(b.noisy)
	if err != nil {
		return err
	}
	ring.GlyphStyle.Color = color.Black
	ring.GlyphStyle.Radius = vg.Points(4)
	ring.GlyphStyle.Shape = draw.RingGlyph{}
	p.Add(ring)
	p.addKey("noisy block", ring)
	return nil
}
