package reports

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dbsock/dbsock/results"
)

// How a picture is laid out so that it can be published as it is: each
// panel's title wrapped to the panel's width, its key (legend) in rows
// under the title, never over its data, and under the panels a caption
// with the machine and the date of the run.

// panel is one panel of a picture: its plot, and its key, drawn in rows
// between its title and its data.
type panel struct {
	*plot.Plot
	key []keyEntry
	// top is a band kept free over the data for what a plotter of the
	// panel writes there (the blocks picture's target names).
	top vg.Length
	// head is the height of the title and key of the row's tallest: the
	// panels of a row of the picture start their data at one height.
	head vg.Length
}

// keyEntry is one entry of a panel's key: its words and what it looks
// like.
type keyEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// newPanel is an empty panel.
func newPanel() *panel { return &panel{Plot: plot.New()} }

// addKey adds an entry to the panel's key.
func (p *panel) addKey(name string, thumbs ...plot.Thumbnailer) {
	p.key = append(p.key, keyEntry{name: name, thumbs: thumbs})
}

// The key's geometry: a thumbnail's width, the space between its
// thumbnail and its words and between two entries, and the margins of
// the key's band.
const (
	keyThumb = 16
	keyGap   = 4
	keySpace = 12
	keyPad   = 4
)

// keyRows lays the key out in rows of at most width: each row's entries.
func (p *panel) keyRows(width vg.Length) [][]keyEntry {
	var rows [][]keyEntry
	var used vg.Length
	for _, e := range p.key {
		w := p.entryWidth(e)
		if len(rows) == 0 || used+keySpace+w > width {
			rows, used = append(rows, nil), -keySpace
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		used += keySpace + w
	}
	return rows
}

// entryWidth is how wide entry e of the key is: its thumbnail, the gap
// and its words.
func (p *panel) entryWidth(e keyEntry) vg.Length {
	return vg.Points(keyThumb+keyGap) + p.Legend.TextStyle.Width(e.name)
}

// keyRowHeight is the height of a row of the key.
func (p *panel) keyRowHeight() vg.Length { return p.Legend.TextStyle.Font.Size * 1.4 }

// headHeight is the height the panel's title, wrapped to width, and its
// key take over its data.
func (p *panel) headHeight(width vg.Length) vg.Length {
	h := p.Title.Padding + p.top
	if p.Title.Text != "" {
		h += p.Title.TextStyle.Rectangle(wrapText(p.Title.TextStyle, p.Title.Text, width)).Size().Y
	}
	if rows := p.keyRows(width - 2*keyPad); len(rows) > 0 {
		h += vg.Length(len(rows))*p.keyRowHeight() + keyPad
	}
	return h
}

// layout wraps the panel's title to c's width and pads it so that the
// key's rows (and the band over the data, top) fit between the title and
// the data, the data starting where the others' of its row of panels
// start (head); it returns the key's rows, where the first one's top is,
// and the padding the title had.
func (p *panel) layout(c draw.Canvas) (rows [][]keyEntry, top, pad vg.Length) {
	width := c.Max.X - c.Min.X
	level := max(p.head-p.headHeight(width), 0)
	p.Title.Text = wrapText(p.Title.TextStyle, p.Title.Text, width)
	rows = p.keyRows(width - 2*keyPad)
	pad = p.Title.Padding
	if len(rows) > 0 {
		p.Title.Padding = pad + vg.Length(len(rows))*p.keyRowHeight() + keyPad
	}
	p.Title.Padding += p.top + level
	top = c.Max.Y - pad/2
	if p.Title.Text != "" {
		top -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y
	}
	return rows, top, pad
}

// draw draws the panel in c: its title wrapped to c's width, its key in
// rows under it, then the plot in what is left.
func (p *panel) draw(c draw.Canvas) {
	rows, top, pad := p.layout(c)
	// gonum/plot keeps room for the y axis's label around the arithmetic
	// middle of the axis's range, which on a log axis is near its top: a
	// band of nothing over the data. The label is drawn here instead, in
	// the middle of the data, and gonum/plot keeps its width only.
	label := p.Y.Label.Text
	if label != "" {
		p.Y.Label.Text = " "
	}
	p.Plot.Draw(c)
	if label != "" {
		data := p.DataCanvas(c)
		p.Y.Label.Text = label
		sty := p.Y.Label.TextStyle
		sty.Rotation += math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Min.X, Y: (data.Min.Y + data.Max.Y) / 2}, label)
	}
	p.Title.Padding = pad
	for i, row := range rows {
		p.drawKeyRow(c, row, top-vg.Length(i+1)*p.keyRowHeight())
	}
}

// drawKeyRow draws one row of the key, centred in c, its bottom at y.
func (p *panel) drawKeyRow(c draw.Canvas, row []keyEntry, y vg.Length) {
	var width vg.Length = -keySpace
	for _, e := range row {
		width += keySpace + p.entryWidth(e)
	}
	x := (c.Min.X+c.Max.X)/2 - width/2
	sty := p.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	h := p.keyRowHeight()
	for _, e := range row {
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y + h*0.15}, Max: vg.Point{X: x + keyThumb, Y: y + h*0.85}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(sty, vg.Point{X: x + keyThumb + keyGap, Y: y + h/2}, e.name)
		x += p.entryWidth(e) + keySpace
	}
}

// wrapText is s with each of its lines broken between words so that none
// is wider than width in sty; a word wider than width alone stays whole.
func wrapText(sty text.Style, s string, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		words := strings.Fields(line)
		cur := ""
		for _, w := range words {
			next := strings.TrimSpace(cur + " " + w)
			if cur != "" && sty.Width(next) > width {
				out, cur = append(out, cur), w
				continue
			}
			cur = next
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// captionStyle is the type of a picture's caption: small, grey.
func captionStyle() text.Style {
	sty := text.Style{Color: color.Gray{Y: 0x50}, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}
	sty.Font.Size = vg.Points(9)
	return sty
}

// captionLines is caption wrapped to a picture's width, and the height of
// the band under its panels that holds it.
func captionLines(caption string) (string, vg.Length) {
	sty := captionStyle()
	caption = wrapText(sty, caption, figureWidth-vg.Inch/5)
	return caption, sty.Rectangle(caption).Size().Y + vg.Inch/10
}

// captionOf is a picture's caption: the machine the run measured on and
// the date it started, with dbsock's version: "AMD EPYC, 2 logical CPUs;
// run of 2026-12-01 23:30 UTC; dbsock v0.1.0".
func captionOf(r *results.Report) string {
	e := r.Environment
	machine := "a machine dbsock did not describe"
	if e.CPUModel != "" || e.NumCPU > 0 {
		machine = fmt.Sprintf("%s, %d logical CPUs", orUnknown(e.CPUModel), e.NumCPU)
	}
	parts := []string{"measured on " + machine}
	if !r.StartedAt.IsZero() {
		parts = append(parts, "run of "+r.StartedAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	if v := strings.TrimSpace(r.Tool.Version); v != "" {
		parts = append(parts, "dbsock "+v)
	}
	return strings.Join(parts, "; ")
}

// drawCaption writes caption (wrapped, captionLines) at the bottom left
// of c, in a band height high.
func drawCaption(c draw.Canvas, caption string, height vg.Length) {
	c.FillText(captionStyle(), vg.Point{X: c.Min.X + vg.Inch/10, Y: c.Min.Y + height - vg.Inch/20}, caption)
}
