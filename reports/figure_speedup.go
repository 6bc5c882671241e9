package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// The post's figure: each case's speedup with its interval, drawn from
// 1.0 (no difference), one row per case labelled with its stack and
// library, grouped by target and sorted within it, fastest first.

// speedupRow is one bar of the figure: its row, its path's offset in the
// row, the speedup and interval (no interval: lo = hi = center; no
// result: center 0).
type speedupRow struct {
	y, c, lo, hi float64
	color        color.Color
	label        string
}

// speedupRows draws the bars from 1.0, their whiskers (cut at the axis,
// with an arrow and the bound where they leave it), each bar's value, and
// the dashed line at 1.0.
type speedupRows struct {
	rows       []speedupRow
	xmin, xmax float64 // the axis's range
	wmin, wmax float64 // where whiskers are cut
	n          int     // rows, headers included
	thick      vg.Length
	font       draw.TextStyle
}

// cut says whether row i's interval leaves the axis: below (-1), above
// (+1), or not (0).
func (s *speedupRows) cut(i int) (below, above bool) {
	r := s.rows[i]
	return r.c > 0 && r.lo < s.wmin, r.c > 0 && r.hi > s.wmax
}

// DataRange implements plot.DataRanger.
func (s *speedupRows) DataRange() (xmin, xmax, ymin, ymax float64) {
	return s.xmin, s.xmax, -0.6, float64(s.n) - 0.4
}

// Plot implements plot.Plotter.
func (s *speedupRows) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	one := trX(1)
	c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}},
		[]vg.Point{{X: one, Y: trY(-0.6)}, {X: one, Y: trY(float64(s.n) - 0.4)}})
	ink := draw.LineStyle{Color: color.Gray{Y: 0x20}, Width: vg.Points(1.3)}
	for i, r := range s.rows {
		if r.c <= 0 {
			continue
		}
		y := trY(r.y)
		x := trX(math.Min(math.Max(r.c, s.xmin), s.wmax))
		c.FillPolygon(r.color, []vg.Point{{X: one, Y: y - s.thick/2}, {X: x, Y: y - s.thick/2}, {X: x, Y: y + s.thick/2}, {X: one, Y: y + s.thick/2}})
		below, above := s.cut(i)
		lo, hi := trX(math.Max(r.lo, s.wmin)), trX(math.Min(r.hi, s.wmax))
		cap := s.thick / 3
		c.StrokeLines(ink, []vg.Point{{X: lo, Y: y}, {X: hi, Y: y}})
		end := hi
		for _, e := range []struct {
			x   vg.Length
			cut bool
			dir vg.Length
		}{{lo, below, -1}, {hi, above, 1}} {
			if !e.cut {
				c.StrokeLines(ink, []vg.Point{{X: e.x, Y: y - cap}, {X: e.x, Y: y + cap}})
				continue
			}
			// The interval goes on past the axis: an arrowhead at its
			// edge says so (the label gives the bound).
			a := vg.Points(7)
			c.FillPolygon(color.Gray{Y: 0x20}, []vg.Point{{X: e.x, Y: y}, {X: e.x - e.dir*a, Y: y - a/1.6}, {X: e.x - e.dir*a, Y: y + a/1.6}})
		}
		c.FillText(s.font, vg.Point{X: max(end, x) + vg.Points(5), Y: y}, r.label)
	}
}

// speedupLabel is a bar's value in words: "1.61× (1.58–1.63)", with the
// bound past the axis as a number ("1.3× (1.1–9.0 →)" reads the same).
func speedupLabel(c, lo, hi float64, ci bool) string {
	if c <= 0 {
		return "no result"
	}
	if !ci {
		return fmt.Sprintf("%.2f× (no interval)", c)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", c, lo, hi)
}

// speedupEntry is one case of the figure before layout.
type speedupEntry struct {
	target, label string
	sort          float64
	bars          []speedupRow // one per compared path (y and color set)
}

// speedupEntries are r's cases as the figure's rows, per target in the
// order the run measured them, each target's cases fastest first.
func speedupEntries(r *results.Report, paths []drivers.Transport) (targets []string, byTarget map[string][]speedupEntry) {
	byTarget = map[string][]speedupEntry{}
	failed := map[string]bool{}
	for _, t := range r.Targets {
		failed[t.Name] = t.Error != ""
	}
	for _, s := range r.Summary {
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
		e := speedupEntry{target: s.Target, label: figureCaseLabel(r, s), sort: math.Inf(-1)}
		if failed[s.Target] {
			e.label += " (incomplete)"
		}
		for j, path := range paths {
			b := speedupRow{color: pathColor(path)}
			if cmp := s.ComparisonOf(path); cmp != nil && cmp.SpeedupP50 > 0 {
				b.c, b.lo, b.hi = cmp.SpeedupP50, cmp.SpeedupP50, cmp.SpeedupP50
				if ci := cmp.SpeedupP50CI; ci != nil {
					b.c, b.lo, b.hi = ci.Center, ci.Lo, ci.Hi
				}
				if j == 0 {
					e.sort = b.c
				}
			}
			b.label = speedupLabel(b.c, b.lo, b.hi, s.ComparisonOf(path) != nil && s.ComparisonOf(path).SpeedupP50CI != nil)
			e.bars = append(e.bars, b)
		}
		byTarget[s.Target] = append(byTarget[s.Target], e)
	}
	for _, t := range r.Targets {
		if failed[t.Name] && byTarget[t.Name] == nil {
			targets = append(targets, t.Name)
			byTarget[t.Name] = []speedupEntry{{target: t.Name, label: t.Name + " (failed)", bars: []speedupRow{{label: "failed"}}}}
		}
	}
	for _, t := range targets {
		slices.SortStableFunc(byTarget[t], func(a, b speedupEntry) int { return cmp.Compare(b.sort, a.sort) })
	}
	return targets, byTarget
}

// figureCaseLabel names a case's row: its stack and library with their
// versions when the run measured several stacks, and the case when the
// target has several.
func figureCaseLabel(r *results.Report, s results.Summary) string {
	c := s.Case
	label := ""
	if len(r.Config.Clients) > 0 {
		label = stackName(s)
		c.Stack = ""
	}
	if casesPerStack(r) > 1 || !c.Plain() {
		label = joinNonEmpty(label, shortLabel(c))
	}
	if label == "" {
		label = s.Target
	}
	return label
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}

// targetHeader names a target over its rows: "redis (Redis 7.0.15)".
func targetHeader(r *results.Report, target string) string {
	for _, t := range r.Targets {
		if t.Name == target && t.Server.Product != "" {
			return fmt.Sprintf("%s (%s)", target, t.Server)
		}
	}
	return target
}

// Sizes of the figures: 8 inches, 800 px at the PNG's 100 dpi, a blog
// column's width, with type that stays readable there.
const (
	figureWidth = 8 * vg.Inch
	figureDPI   = 100
	rowHeight   = 0.3 * vg.Inch
)

// figureFonts sets p's type for a figure read at 800 px: 13 pt title,
// 11 pt labels and ticks.
func figureFonts(p *plot.Plot) {
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(11)
		a.Tick.Label.Font.Size = vg.Points(11)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(11)
}

// speedupFigure is the post's figure and its height: the rows, and the
// plotter that draws them (for tests to read its cuts).
func speedupFigure(r *results.Report) (*plot.Plot, *speedupRows, vg.Length) {
	paths := comparedPaths(r)
	targets, byTarget := speedupEntries(r, paths)
	grouped := len(r.Config.Clients) > 0 || len(r.Summary) > len(r.Targets)
	var names []string // top to bottom
	var rows []speedupEntry
	for _, t := range targets {
		if grouped {
			names, rows = append(names, targetHeader(r, t)+":"), append(rows, speedupEntry{})
		}
		for _, e := range byTarget[t] {
			if !grouped && e.label == t {
				e.label = targetHeader(r, t)
			}
			names, rows = append(names, e.label), append(rows, e)
		}
	}
	n := len(rows)
	s := &speedupRows{n: n, thick: barThick(len(paths))}
	s.font = draw.TextStyle{Color: color.Gray{Y: 0x20}, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, YAlign: draw.YCenter}
	s.font.Font.Size = vg.Points(10)
	minC, maxC, minLo, maxHi := 1.0, 1.0, 1.0, 1.0
	for i, e := range rows {
		y := float64(n - 1 - i)
		for j, b := range e.bars {
			b.y = y + (float64(len(paths)-1)/2-float64(j))*0.8/float64(len(paths))
			s.rows = append(s.rows, b)
			if b.c > 0 {
				minC, maxC = math.Min(minC, b.c), math.Max(maxC, b.c)
				minLo, maxHi = math.Min(minLo, b.lo), math.Max(maxHi, b.hi)
			}
		}
	}
	pad := math.Max(maxC-minC, 0.2)
	s.wmin = math.Max(math.Max(minLo, minC-pad), 0)
	s.wmax = math.Min(maxHi, maxC+pad)
	s.wmin = math.Max(0, s.wmin-0.03*(s.wmax-s.wmin))
	s.xmin, s.xmax = s.wmin, s.wmax+0.5*(s.wmax-s.wmin)
	p := plot.New()
	figureFonts(p)
	scope := "block pairs"
	if r.Config.Instances > 1 {
		scope = "server instances"
	}
	base := baseOf(r)
	p.Title.Text = fmt.Sprintf("Unix speedup at p50 (%s/Unix), 95%% CI over %s", base.Label(), scope)
	if len(paths) > 1 || base != results.DefaultBaseline() {
		p.Title.Text = fmt.Sprintf("Speedup at p50 over %s (%s/path), 95%% CI over %s", base.Label(), base.Label(), scope)
	}
	p.X.Label.Text = "speedup (×), paired; dashed at 1.0: no difference"
	p.X.Tick.Marker = withOne{}
	p.Add(s)
	slices.Reverse(names)
	p.NominalY(names...)
	p.Y.Padding = 0
	p.X.Min, p.X.Max = s.xmin, s.xmax
	if len(paths) > 1 {
		for _, path := range paths {
			p.Legend.Add(path.Label(), swatch{pathColor(path)})
		}
		p.Legend.Top = true
	}
	height := max(vg.Length(n)*rowPitch(len(paths))+1.2*vg.Inch, 2.4*vg.Inch)
	return p, s, height
}

// barThick is a bar's thickness among paths bars a row: at most 14
// points, less with several paths.
func barThick(paths int) vg.Length { return vg.Points(math.Min(14, 16/float64(max(paths, 1)))) }

// rowPitch is a row's height with paths bars in it: a row more for each
// two paths past the first two.
func rowPitch(paths int) vg.Length { return rowHeight * vg.Length(max(1, (paths+1)/2)) }

// swatch is a legend entry's colour.
type swatch struct{ color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.Color, []vg.Point{c.Min, {X: c.Min.X, Y: c.Max.Y}, c.Max, {X: c.Max.X, Y: c.Min.Y}})
}
