package reports

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dbsock/dbsock/results"
)

// The pictures --plot draws, each asked for by name: the post's figure
// (the speedups, the default), and the others a reader may want beside
// it, each with its panels on shared scales.

// PlotKind names one picture.
type PlotKind string

// The pictures.
const (
	// PlotSpeedup: each case's speedup with its interval, from 1.0,
	// labelled with its stack and library, grouped by target (default).
	PlotSpeedup PlotKind = "speedup"
	// PlotPercentiles: latency by percentile, one panel per case, every
	// panel on the same latency scale.
	PlotPercentiles PlotKind = "percentiles"
	// PlotBlocks: every block's p50 over the run, one panel per client
	// stack with one series per path, on one latency scale.
	PlotBlocks PlotKind = "blocks"
	// PlotRate: at load, p50 and p99 against the offered rate, one line
	// per path, for cases measured at several rates.
	PlotRate PlotKind = "rate"
	// PlotSweep: the speedup against each swept dimension.
	PlotSweep PlotKind = "sweep"
	// PlotDecomposition: where each case's p50 goes (--explain).
	PlotDecomposition PlotKind = "decomposition"
	// PlotAll: the speedups in the file named, every other picture with
	// something to draw beside it (FILE-KIND.ext).
	PlotAll PlotKind = "all"
)

// PlotKinds are the pictures by name, the default first.
var PlotKinds = []PlotKind{PlotSpeedup, PlotPercentiles, PlotBlocks, PlotRate, PlotSweep, PlotDecomposition, PlotAll}

// PlotSyntax says what --plot takes, for help and errors.
const PlotSyntax = "[KIND:]FILE.svg|.png, KIND one of speedup (the default), percentiles, blocks, rate, sweep, decomposition, or all (the speedups in FILE, each other picture with something to draw beside it as FILE-KIND.ext)"

// ParsePlot reads one --plot value: [KIND:]FILE.
func ParsePlot(spec string) (PlotKind, string, error) {
	kind, path := PlotSpeedup, spec
	if k, rest, ok := strings.Cut(spec, ":"); ok && slices.Contains(PlotKinds, PlotKind(k)) {
		kind, path = PlotKind(k), rest
	} else if ok && k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyz-") == "" {
		// A word and a colon name a picture (a file named so is ./word:FILE).
		return "", "", fmt.Errorf("%q is not a picture: want %s", k, PlotSyntax)
	}
	if path == "" {
		return "", "", fmt.Errorf("%q names no file: want %s", spec, PlotSyntax)
	}
	if err := CheckPlotPath(path); err != nil {
		return "", "", err
	}
	return kind, path, nil
}

// BesidePath is where --plot all:FILE writes kind: FILE-KIND.ext.
func BesidePath(path string, kind PlotKind) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + string(kind) + ext
}

// PlotKindContext draws kind of r to w as ext (".svg" or ".png"); it stops
// between panels once ctx ends. A picture with nothing to draw is an
// error that says why, never a panic.
func PlotKindContext(ctx context.Context, w io.Writer, ext string, kind PlotKind, r *results.Report) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the %s picture cannot be drawn from this report (%v): too few results to plot", kind, p)
		}
	}()
	if len(r.Summary) == 0 {
		return fmt.Errorf("nothing to plot: the report has no complete results")
	}
	r = plainCopy(r) // gonum/plot escapes its SVG text
	caption := captionOf(r)
	if kind == PlotSpeedup || kind == PlotAll {
		p, _, height := speedupFigure(r)
		return drawPlots(ctx, w, ext, []*panel{p}, 1, height, caption)
	}
	ps, err := kindPanels(ctx, r, kind)
	if err != nil {
		return err
	}
	var plots []*panel
	for _, p := range ps {
		if drawable(p.Plot) {
			plots = append(plots, p)
		}
	}
	if len(plots) == 0 {
		return fmt.Errorf("nothing to plot as %s: %s", kind, nothingWhy[kind])
	}
	cols := min(2, len(plots))
	rows := (len(plots) + cols - 1) / cols
	return drawPlots(ctx, w, ext, plots, cols, vg.Length(rows)*panelHeight(cols), caption)
}

// nothingWhy says what a picture needs that the report lacks.
var nothingWhy = map[PlotKind]string{
	PlotPercentiles:   "no case has latencies to draw",
	PlotBlocks:        "the report has no blocks (a report from an older dbsock)",
	PlotRate:          "no case was measured at several rates (run --rate 1000,2000,4000)",
	PlotSweep:         "nothing was swept (--value-size, --concurrency or --pipeline with several values)",
	PlotDecomposition: "the run did not decompose its cases (--explain)",
}

// panelHeight is one row of panels' height, its title and key included:
// 4 inches in one column, 3.6 in two (a panel's data must stay taller
// than its latency axis's label is long).
func panelHeight(cols int) vg.Length {
	if cols == 1 {
		return 4 * vg.Inch
	}
	return 3.6 * vg.Inch
}

// kindPanels are the panels of one picture, before any is left out.
func kindPanels(ctx context.Context, r *results.Report, kind PlotKind) ([]*panel, error) {
	switch kind {
	case PlotPercentiles:
		return percentilePanels(ctx, r)
	case PlotBlocks:
		return blockPanels(r)
	case PlotRate:
		return ratePanels(r)
	case PlotSweep:
		var out []*panel
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
	case PlotDecomposition:
		if parts := results.Decompose(r); len(parts) > 0 {
			p, err := decompositionPlot(parts)
			return []*panel{p}, err
		}
		return nil, nil
	}
	return nil, fmt.Errorf("unknown picture %q: want %s", kind, PlotSyntax)
}

// drawPlots lays plots out in cols columns, figureWidth wide and height
// high, with caption under them, and writes them as ext.
func drawPlots(ctx context.Context, w io.Writer, ext string, plots []*panel, cols int, height vg.Length, caption string) error {
	caption, band := captionLines(caption)
	height += band
	var canvas vg.CanvasWriterTo
	switch ext {
	case ".svg":
		// The fonts go with the picture: text is laid out with their metrics,
		// and a browser without them would draw wider glyphs past the
		// panels (a clipped title).
		canvas = vgsvg.NewWith(vgsvg.UseWH(figureWidth, height), vgsvg.EmbedFonts(true))
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figureWidth, height), vgimg.UseDPI(figureDPI))}
	default:
		return fmt.Errorf("unknown image format %q", ext)
	}
	dc := draw.New(canvas)
	drawCaption(dc, caption, band)
	dc = draw.Crop(dc, 0, 0, band, 0)
	rows := (len(plots) + cols - 1) / cols
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Inch / 5, PadY: vg.Inch / 5,
		PadTop: vg.Inch / 10, PadBottom: vg.Inch / 10, PadLeft: vg.Inch / 10, PadRight: vg.Inch / 5}
	width := (figureWidth - tiles.PadLeft - tiles.PadRight - vg.Length(cols-1)*tiles.PadX) / vg.Length(cols)
	for row := 0; row*cols < len(plots); row++ {
		var head vg.Length
		for _, p := range plots[row*cols : min((row+1)*cols, len(plots))] {
			head = max(head, p.headHeight(width))
		}
		for _, p := range plots[row*cols : min((row+1)*cols, len(plots))] {
			p.head = head
		}
	}
	for i, p := range plots {
		if err := interrupted(ctx); err != nil {
			return err
		}
		p.draw(tiles.At(dc, i%cols, i/cols))
	}
	_, err := canvas.WriteTo(w)
	return err
}

// shareY puts every panel on the same y range (the union of theirs), so
// that a reader comparing panels compares like with like.
func shareY(ps []*panel) {
	if len(ps) < 2 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
	}
	for _, p := range ps {
		p.Y.Min, p.Y.Max = lo, hi
	}
}
