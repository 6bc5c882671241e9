package reports

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
)

// The picture of several hosts: a row per case and pair of paths, a bar
// per host, each its own speedup with its interval, drawn from 1.0 as the
// post's figure draws a run's paths.

// hostColors are the hosts' colours, in the order of the columns.
var hostColors = []color.Color{
	colorUnix, colorTCP, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, color.Gray{Y: 0x50},
	color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
}

// PlotHosts draws h's speedups as ext (".svg" or ".png"): a row per case
// and pair of paths (under a heading per group and target), a bar per
// host in its colour, each with its interval and its value.
func PlotHosts(ctx context.Context, w io.Writer, ext string, h *Hosts) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the hosts' picture cannot be drawn from these files (%v): too few results to plot", p)
		}
	}()
	rows := 0
	for _, m := range h.Matrices {
		rows += len(m.Rows)
	}
	if rows == 0 {
		return fmt.Errorf("nothing to plot: no file has a complete result")
	}
	p, height := hostsFigure(h)
	return drawPlots(ctx, w, ext, []*panel{p}, 1, height, hostsCaption(h))
}

// hostOrder is every host's label across h's matrices, in the order they
// first come: a host's colour is its place here.
func hostOrder(h *Hosts) []string {
	var out []string
	for _, m := range h.Matrices {
		for _, host := range m.Hosts {
			if !slices.Contains(out, host.Label) {
				out = append(out, host.Label)
			}
		}
	}
	return out
}

func hostColor(order []string, label string) color.Color {
	return hostColors[max(slices.Index(order, label), 0)%len(hostColors)]
}

// hostsFigure is the picture's panel and height.
func hostsFigure(h *Hosts) (*panel, vg.Length) {
	order := hostOrder(h)
	hosts := 0
	for _, m := range h.Matrices {
		hosts = max(hosts, len(m.Hosts))
	}
	var names []string
	var rows []speedupEntry
	for _, m := range h.Matrices {
		target := ""
		for _, row := range m.Rows {
			if row.Target != target || target == "" {
				target = row.Target
				head := row.Target
				if g := groupTitle(m); g != "" {
					head = g + ", " + head
				}
				names, rows = append(names, cutLabel(head)+":"), append(rows, speedupEntry{})
			}
			c := row.Case
			c.Target = ""
			names = append(names, cutLabel(c.Label()+" ("+row.Path.Label()+"/"+orBase(row.Baseline).Label()+")"))
			e := speedupEntry{}
			for i, x := range row.Cells {
				e.bars = append(e.bars, hostBar(x, m.Hosts[i].Label, hostColor(order, m.Hosts[i].Label)))
			}
			rows = append(rows, e)
		}
	}
	p, s, height := speedupPanel(names, rows, hosts)
	p.Title.Text = "Each host's own speedup at p50 (baseline/path), with its 95% CI"
	for _, host := range order {
		p.addKey(host, swatch{hostColor(order, host)})
	}
	if why := undecidedKey(s.rows); why != "" {
		p.addKey(why, hollow{})
	}
	return p, height
}

// hostBar is one host's bar: its speedup and interval, hollow where its
// verdict is no result to read, its value labelled with the host.
func hostBar(x *MatrixCell, host string, ink color.Color) speedupRow {
	b := speedupRow{color: ink, decided: true}
	if x == nil {
		b.label = host + ": not measured"
		return b
	}
	if x.SpeedupP50 > 0 {
		b.c, b.lo, b.hi = x.SpeedupP50, x.SpeedupP50, x.SpeedupP50
		if ci := x.SpeedupP50CI; ci != nil {
			b.c, b.lo, b.hi = ci.Center, ci.Lo, ci.Hi
		}
	}
	b.label = host + ": " + speedupLabel(b.c, b.lo, b.hi, x.SpeedupP50CI != nil)
	if note, ok := undecidedNotes[x.VerdictKind]; ok && b.c > 0 {
		b.decided, b.label = false, b.label+": "+note
	}
	return b
}

// hostsCaption is the picture's caption: each host and its file.
func hostsCaption(h *Hosts) string {
	var parts []string
	for _, m := range h.Matrices {
		for _, host := range m.Hosts {
			parts = append(parts, host.Label+" ("+host.File+")")
		}
	}
	return "each bar one host's own paired comparison, never a ratio of two hosts' latencies; hosts: " + strings.Join(parts, ", ")
}
