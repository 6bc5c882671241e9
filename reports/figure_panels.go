package reports

import (
	"cmp"
	"context"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// The pictures of many panels: percentiles and blocks, each on one scale
// across its panels, and latency against the offered rate.

// panelFonts sets a panel's type for two columns at 800 px.
func panelFonts(p *plot.Plot) {
	figureFonts(p)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(10), vg.Points(10)
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
}

// reportLatencyRange is the lowest p50 and highest p999 of r's sides, in
// ns: what the latency panels span.
func reportLatencyRange(r *results.Report) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, s := range r.Summary {
		for _, side := range s.Sides {
			if l := side.Latency; l.P50 > 0 {
				lo, hi = math.Min(lo, float64(l.Min)), math.Max(hi, float64(max(l.P999, l.P99)))
			}
		}
	}
	return math.Max(lo, 1), hi
}

// percentilePanels are one percentile panel per case, every one on the
// same latency scale, in a unit that fits it.
func percentilePanels(ctx context.Context, r *results.Report) ([]*panel, error) {
	u := axisUnit(reportLatencyRange(r))
	var out []*panel
	for _, s := range r.Summary {
		if err := interrupted(ctx); err != nil {
			return nil, err
		}
		p, err := percentilePlot(r, s, u)
		if err != nil {
			return nil, err
		}
		if p != nil && drawable(p.Plot) {
			panelFonts(p.Plot)
			out = append(out, p)
		}
	}
	shareY(out)
	return out, nil
}

// blockPanels are every block's p50 over the run, one panel per client
// stack (one series per path in each), on one latency scale.
func blockPanels(r *results.Report) ([]*panel, error) {
	var stacks []string
	for _, run := range r.Runs {
		if !slices.Contains(stacks, run.Stack) {
			stacks = append(stacks, run.Stack)
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, run := range r.Runs {
		for _, b := range run.Blocks {
			if b.P50 > 0 {
				lo, hi = math.Min(lo, float64(b.P50)), math.Max(hi, float64(b.P50))
			}
		}
	}
	u := axisUnit(lo, hi)
	var out []*panel
	for _, stack := range stacks {
		p, err := blocksPlot(r, stack, u)
		if err != nil {
			return nil, err
		}
		if p != nil {
			panelFonts(p.Plot)
			out = append(out, p)
		}
	}
	shareY(out)
	return out, nil
}

// stackTitle names a client stack in a panel's title, by the first of its
// cases: "PHP 8.2.29 (phpredis 5.3.7)".
func stackTitle(r *results.Report, stack string) string {
	var name, model string
	for _, s := range r.Summary {
		if s.Stack != stack {
			continue
		}
		n, m := figureStackParts(s)
		if name != "" && n != name { // several targets' libraries: the language alone
			n = languageOf(s)
		}
		name, model = n, m
	}
	if name == "" {
		return results.StackName(stack)
	}
	if model != "" {
		name += ", " + model
	}
	return name
}

// languageOf names s's stack without its library: "Python 3.11.2".
func languageOf(s results.Summary) string {
	s.Client = cloneWithoutLibrary(s.Client)
	n, _ := stackParts(s)
	return n
}

func cloneWithoutLibrary(c *results.Client) *results.Client {
	if c == nil {
		return nil
	}
	x := *c
	x.Library, x.LibraryVersion = "", ""
	return &x
}

// rateGroup is the cases of one target, stack and workload at several
// offered rates.
type rateGroup struct {
	key   results.Case
	cases []results.Summary
}

// rateGroups are r's cases measured at several rates, grouped.
func rateGroups(r *results.Report) []rateGroup {
	var out []rateGroup
	for _, s := range r.Summary {
		if s.Rate <= 0 {
			continue
		}
		k := s.Case
		k.Rate = 0
		i := slices.IndexFunc(out, func(g rateGroup) bool { return g.key == k })
		if i < 0 {
			out, i = append(out, rateGroup{key: k}), len(out)
		}
		out[i].cases = append(out[i].cases, s)
	}
	return slices.DeleteFunc(out, func(g rateGroup) bool { return len(g.cases) < 2 })
}

// objective is what the report says of a run's latency objective
// (--slo) for one group of cases: the limit in ns, its words ("p99 <
// 2ms"), and each path's highest offered rate within it.
type objective struct {
	limitNs float64
	words   string
	highest map[drivers.Transport]float64
	atLeast map[drivers.Transport]bool
}

// objectiveOf is the objective of the group whose cases are like c (Rate
// 0), from the report's objectives; nil when the run had none.
func objectiveOf(r *results.Report, c results.Case) *objective {
	if r.Config.SLO == nil {
		return nil
	}
	for _, o := range r.Objectives {
		if o.Case != c {
			continue
		}
		out := &objective{limitNs: float64(r.Config.SLO.LimitNs), words: r.Config.SLO.String(), highest: map[drivers.Transport]float64{},
			atLeast: map[drivers.Transport]bool{}}
		for _, capacity := range o.Capacities {
			out.highest[capacity.Path], out.atLeast[capacity.Path] = capacity.HighestRate, capacity.AtLeast
		}
		return out
	}
	return nil
}

// ratePanels are, per group measured at several rates, p50 (solid) and
// p99 (dashed) of each path against the offered rate, on a log latency
// axis shared across the panels, with the objective's line and each
// path's highest rate within it where the report has them.
func ratePanels(r *results.Report) ([]*panel, error) {
	groups := rateGroups(r)
	lo, hi := math.Inf(1), 0.0
	for _, g := range groups {
		for _, s := range g.cases {
			for _, side := range s.Sides {
				if side.Latency.P50 > 0 {
					lo, hi = math.Min(lo, float64(side.Latency.P50)), math.Max(hi, float64(side.Latency.P99))
				}
			}
		}
	}
	if o := r.Config.SLO; o != nil {
		hi = math.Max(hi, float64(o.LimitNs)) // the objective's line is on the axis
	}
	u := axisUnit(lo, hi)
	var out []*panel
	for _, g := range groups {
		p, err := ratePlot(r, g, u)
		if err != nil {
			return nil, err
		}
		panelFonts(p.Plot)
		out = append(out, p)
	}
	shareY(out)
	return out, nil
}

// ratePlot is one group's latency against the offered rate.
func ratePlot(r *results.Report, g rateGroup, u latUnit) (*panel, error) {
	slices.SortFunc(g.cases, func(a, b results.Summary) int { return cmp.Compare(a.Rate, b.Rate) })
	p := newPanel()
	name := g.key.Target
	if len(r.Config.Clients) > 0 {
		stack, model := figureStackParts(g.cases[0]) // this target's library, not another's of the stack
		name += " · " + stack
		if model != "" {
			name += "\n" + model
		}
	}
	p.Title.Text = name + "\np50 (solid) and p99 (dashed) against the offered rate"
	p.X.Label.Text = "offered rate (lookups/s)"
	p.Y.Label.Text = "latency (" + u.name + ", log scale)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	var ticks plot.ConstantTicks
	var rates []float64
	for _, s := range g.cases {
		rates = append(rates, s.Rate)
	}
	for i, label := range rateAxis(rates) {
		ticks = append(ticks, plot.Tick{Value: rates[i], Label: label})
	}
	if lo, hi := g.cases[0].Rate, g.cases[len(g.cases)-1].Rate; hi >= 4*lo { // rates doubling: a log axis spaces them evenly
		p.X.Scale, p.X.Label.Text = plot.LogScale{}, "offered rate (lookups/s, log scale)"
	}
	p.X.Tick.Marker = ticks
	p.Add(plotter.NewGrid())
	for _, t := range reportPaths(r) {
		var p50, p99 plotter.XYs
		for _, s := range g.cases {
			if side, ok := s.SideOf(t); ok && side.Latency.P50 > 0 {
				p50 = append(p50, plotter.XY{X: s.Rate, Y: float64(side.Latency.P50) / u.ns})
				p99 = append(p99, plotter.XY{X: s.Rate, Y: float64(max(side.Latency.P99, side.Latency.P50)) / u.ns})
			}
		}
		if len(p50) == 0 {
			continue
		}
		for i, xys := range []plotter.XYs{p50, p99} {
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color, line.Width = pathColor(t), pathColor(t), vg.Points(1.8)
			points.Shape = draw.CircleGlyph{}
			if i == 1 {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(line, points)
			if i == 0 {
				p.addKey(t.Label(), line)
			}
		}
	}
	if o := objectiveOf(r, g.key); o != nil {
		addObjective(p, o, u)
	}
	return p, nil
}

// addObjective draws the objective as a horizontal line and each path's
// highest rate within it as a vertical one in the path's colour.
func addObjective(p *panel, o *objective, u latUnit) {
	limit := plotter.NewFunction(func(float64) float64 { return o.limitNs / u.ns })
	limit.Color, limit.Width, limit.Dashes = color.Black, vg.Points(1.2), []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(limit)
	p.addKey("objective "+o.words, limit)
	for _, t := range drivers.AllPaths {
		rate, ok := o.highest[t]
		if !ok || rate <= 0 {
			continue
		}
		mark, err := plotter.NewScatter(plotter.XYs{{X: rate, Y: o.limitNs / u.ns}})
		if err != nil {
			continue
		}
		// A ring for TCP, a triangle for the others: two paths
		// that held the same rate both show.
		mark.GlyphStyle = draw.GlyphStyle{Color: pathColor(t), Radius: vg.Points(5), Shape: draw.PyramidGlyph{}}
		if t == results.DefaultBaseline() {
			mark.GlyphStyle = draw.GlyphStyle{Color: pathColor(t), Radius: vg.Points(6.5), Shape: draw.RingGlyph{}}
		}
		p.Add(mark)
		held := words.Thousands(rate) + "/s"
		if o.atLeast[t] {
			held = "≥ " + held + ": every rate held"
		}
		p.addKey(t.Label()+": highest rate within ("+held+")", mark)
	}
}
