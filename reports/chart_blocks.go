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

// addSpanLabels writes each target's name over its stretch of the run, at
// height y, every other one a row higher (y×1.35 on the log axis), so
// that the names of short stretches side by side do not run into each
// other.
func addSpanLabels(p *plot.Plot, spans []*span, y float64) error {
	var labels plotter.XYLabels
	for i, sp := range spans {
		if math.IsInf(sp.lo, 1) {
			continue
		}
		at := y
		if i%2 == 1 {
			at = y * 1.35
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: (sp.lo + sp.hi) / 2, Y: at})
		labels.Labels = append(labels.Labels, sp.name)
	}
	if len(labels.XYs) == 0 {
		return nil
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(lb)
	return nil
}

// blocksPlot draws every block's p50 of one client stack's runs against
// when it started, in unit u, TCP and Unix in their colors and noisy blocks ringed, with each target's name over its
// stretch of the run: drift and noisy periods show at a glance. nil when the
// report has no blocks.
func blocksPlot(r *results.Report, stack string, u latUnit) (*plot.Plot, error) {
	b := collectBlocks(r, stack, u)
	if len(b.series) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = "Block p50 over the run (noisy blocks ringed)"
	if len(r.Config.Clients) > 0 {
		p.Title.Text = "Block p50 over the run: " + stackTitle(r, stack) + "\n(noisy blocks ringed)"
	}
	p.X.Label.Text = "seconds since the start"
	p.Y.Label.Text = "block p50 (" + u.name + ", log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	if err := addBlockScatters(p, r, b); err != nil {
		return nil, err
	}
	top, bottom := 0.0, math.Inf(1)
	for _, sp := range b.spans {
		top = math.Max(top, sp.top)
	}
	for _, xys := range b.series {
		for _, xy := range xys {
			bottom = math.Min(bottom, xy.Y)
		}
	}
	if err := addSpanLabels(p, b.spans, top*1.25); err != nil {
		return nil, err
	}
	p.Y.Max = top * 1.6
	if len(b.spans) > 1 {
		p.Y.Max = top * 2.1 // room for the second row of names
	}
	// The legend sits bottom left, in a band below the fastest block.
	rows := len(b.series)
	if len(b.noisy) > 0 {
		rows++
	}
	p.Y.Min = legendFloor(bottom, p.Y.Max, rows)
	p.Legend.Top, p.Legend.Left = false, true
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
func addBlockScatters(p *plot.Plot, r *results.Report, b blockPoints) error {
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
		p.Legend.Add(t.Label(), sc)
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
	p.Legend.Add("noisy block", ring)
	return nil
}
