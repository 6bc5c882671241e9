package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dbsock/dbsock/results"
)

// The post's figure: each case's speedup with its interval, drawn from
// 1.0 (no difference), one row per case labelled with its stack and
// library, grouped by target and sorted within it, fastest first.

// speedupRow is one bar of the figure: its row, its path's offset in the
// row, the speedup and interval (no interval: lo = hi = center; no
// result: center 0), and whether its verdict is a result to read from the
// bar (decided: filled in its path's colour) or not (undecided, no
// interval, the generator fell behind: hollow, outlined in its path's
// colour, its whisker and label grey, the label saying why).
type speedupRow struct {
	y, c, lo, hi float64
	color        color.Color
	label        string
	decided      bool
}

// undecidedInk is the grey of a bar that is no result to read.
var undecidedInk = color.Gray{Y: 0x90}

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
	for i, r := range s.rows {
		if r.c <= 0 {
			continue
		}
		y := trY(r.y)
		x := trX(math.Min(math.Max(r.c, s.xmin), s.wmax))
		bar := []vg.Point{{X: one, Y: y - s.thick/2}, {X: x, Y: y - s.thick/2}, {X: x, Y: y + s.thick/2}, {X: one, Y: y + s.thick/2}}
		ink, font := draw.LineStyle{Color: color.Gray{Y: 0x20}, Width: vg.Points(1.3)}, s.font
		if r.decided {
			c.FillPolygon(r.color, bar)
		} else {
			// Hollow, its outline dashed in its path's colour: which path
			// it is, and that it is no result.
			ink.Color, font.Color = undecidedInk, color.Gray{Y: 0x60}
			c.StrokeLines(draw.LineStyle{Color: r.color, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, append(bar, bar[0]))
		}
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
			c.FillPolygon(ink.Color, []vg.Point{{X: e.x, Y: y}, {X: e.x - e.dir*a, Y: y - a/1.6}, {X: e.x - e.dir*a, Y: y + a/1.6}})
		}
		// Past the bar, its whisker and the line at 1.0, whichever ends
		// furthest right: never over a bar or a whisker.
		c.FillText(font, vg.Point{X: max(end, x, one) + vg.Points(5), Y: y}, r.label)
	}
}

// hollow is the key's swatch of a bar that is no result to read.
type hollow struct{}

// Thumbnail implements plot.Thumbnailer.
func (hollow) Thumbnail(c *draw.Canvas) {
	box := []vg.Point{c.Min, {X: c.Min.X, Y: c.Max.Y}, c.Max, {X: c.Max.X, Y: c.Min.Y}, c.Min}
	c.StrokeLines(draw.LineStyle{Color: undecidedInk, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, box)
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
func speedupFigure(r *results.Report) (*panel, *speedupRows, vg.Length) {
	paths := comparedPaths(r)
	targets, byTarget := speedupEntries(r, paths)
	grouped := len(r.Config.Clients) > 0 || len(r.Summary) > len(r.Targets)
	var names []string // top to bottom
	var rows []speedupEntry
	for _, t := range targets {
		if grouped {
			names, rows = append(names, cutLabel(targetHeader(r, t))+":"), append(rows, speedupEntry{})
		}
		for _, e := range byTarget[t] {
			if !grouped && e.label == t {
				e.label = targetHeader(r, t)
			}
			names, rows = append(names, cutLabel(e.label)), append(rows, e)
		}
	}
	p, s, height := speedupPanel(names, rows, len(paths))
	p.Title.Text = speedupTitle(r, s, len(paths))
	if len(paths) > 1 {
		for _, path := range paths {
			p.addKey(path.Label(), swatch{pathColor(path)})
		}
	}
	if why := undecidedKey(s.rows); why != "" {
		p.addKey(why, hollow{})
	}
	return p, s, height
}

// speedupPanel lays rows out (named names, top to bottom), bars bars a
// row, each bar from 1.0 with its whisker and value: the panel without
// its title and key, its plotter, and the picture's height.
func speedupPanel(names []string, rows []speedupEntry, bars int) (*panel, *speedupRows, vg.Length) {
	n := len(rows)
	s := &speedupRows{n: n, thick: barThick(bars)}
	s.font = draw.TextStyle{Color: color.Gray{Y: 0x20}, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, YAlign: draw.YCenter}
	s.font.Font.Size = vg.Points(10)
	minC, maxC, minLo, maxHi := 1.0, 1.0, 1.0, 1.0
	for i, e := range rows {
		y := float64(n - 1 - i)
		for j, b := range e.bars {
			b.y = y + (float64(bars-1)/2-float64(j))*0.8/float64(bars)
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
	p := newPanel()
	figureFonts(p.Plot)
	p.X.Label.Text = "speedup (×), paired; dashed at 1.0: no difference"
	p.X.Tick.Marker = ratioTicks{}
	p.Add(s)
	names = slices.Clone(names)
	slices.Reverse(names)
	p.NominalY(names...)
	p.Y.Padding = 0
	s.xmin, s.xmax = s.wmin, s.labelsEnd(p.Y.Tick.Label, names)
	p.X.Min, p.X.Max = s.xmin, s.xmax
	height := max(vg.Length(n)*rowPitch(bars)+1.4*vg.Inch, 2.6*vg.Inch)
	return p, s, height
}

// undecidedKey is the key's words for the hollow bars among rows ("" with
// none): why they are no result to read, the reasons they have.
func undecidedKey(rows []speedupRow) string {
	var why []string
	for _, b := range rows {
		if b.c <= 0 || b.decided {
			continue
		}
		for _, w := range []struct{ note, words string }{{"undecided", "undecided"}, {"no interval", "no interval"}, {"fell behind", "no winner at its rate"}} {
			if strings.Contains(b.label, w.note) && !slices.Contains(why, w.words) {
				why = append(why, w.words)
			}
		}
	}
	if len(why) == 0 {
		return ""
	}
	return "no result to read: " + strings.Join(why, ", ")
}

// speedupTitle is the figure's title: what is compared, and the interval
// its bars show, where any has one.
func speedupTitle(r *results.Report, s *speedupRows, paths int) string {
	scope := "95% CI over block pairs"
	if r.Config.Instances > 1 {
		scope = "95% CI over server instances"
	}
	if !slices.ContainsFunc(s.rows, func(b speedupRow) bool { return b.c > 0 && b.lo < b.hi }) {
		scope = "no 95% CI: too few server instances or block pairs"
		if r.Config.Instances <= 1 {
			scope = "no 95% CI: too few block pairs"
		}
	}
	base := baseOf(r)
	if paths > 1 || base != results.DefaultBaseline() {
		return fmt.Sprintf("Speedup at p50 over %s (%s/path), %s", base.Label(), base.Label(), scope)
	}
	return fmt.Sprintf("Unix speedup at p50 (%s/Unix), %s", base.Label(), scope)
}

// labelsEnd is where the axis must end for every bar's label to fit
// right of it on a figure figureWidth wide whose rows are named names in
// sty: each label starts past its bar, its whisker and 1.0, and the axis
// goes on until it ends.
func (s *speedupRows) labelsEnd(sty text.Style, names []string) float64 {
	var namesWidth vg.Length
	for _, n := range names {
		namesWidth = max(namesWidth, sty.Width(n))
	}
	data := figureWidth - namesWidth - 0.6*vg.Inch // the tiles' margins, the names' padding
	end := s.wmax + 0.05*(s.wmax-s.wmin)
	for _, r := range s.rows {
		if r.c <= 0 && r.label == "" {
			continue
		}
		start := math.Max(math.Min(math.Max(r.hi, r.c), s.wmax), 1)
		w := s.font.Width(r.label) + vg.Points(12)
		if data > w {
			end = math.Max(end, (float64(data)*start-float64(w)*s.wmin)/float64(data-w))
		}
	}
	return end
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
