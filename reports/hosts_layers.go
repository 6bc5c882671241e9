package reports

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/results"
)

// Each host's layers beneath the matrix: where each host's p50 goes on a
// row's two paths (its file's --explain), side by side, and for each host
// against the row's reference the layer whose move between the hosts
// accounts for most of the change in the speedup (results.ShiftFrom
// computes the shares; this file words them).

// writeHostLayers writes m's layers section: nothing where no file splits
// any of m's cases.
func writeHostLayers(b *strings.Builder, m Matrix) {
	var rows []MatrixRow
	for _, row := range m.Rows {
		if layersRef(row) >= 0 {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Where each host's p50 goes\n\n")
	b.WriteString("Each host's p50 on a row's two paths, split as that host's own report splits it (`--explain`): the kernel floor, " +
		"the client's own round trip above it (Go's runtime, or the stack's) and the server's work and protocol; the parts add up to the p50 on each path. " +
		"The speedup here is the ratio of those two p50s, which can differ a little from the cell's paired speedup above.\n\n")
	b.WriteString("| target | case | paths | layer |")
	for _, h := range m.Hosts {
		fmt.Fprintf(b, " %s |", cell(safeText(h.Label)))
	}
	b.WriteString("\n|---|---|---|---|" + strings.Repeat("--:|", len(m.Hosts)) + "\n")
	for _, row := range rows {
		writeLayerRows(b, row)
	}
	b.WriteString("\nHow each host's speedup moved from the reference's, the first host whose file splits the case: every layer moves from " +
		"the reference's value to the host's together, in small steps along the straight line between them, and each layer is credited with " +
		"the change of the speedup its own move makes at every step (the Aumann-Shapley value, Aumann and Shapley 1974), so that the shares " +
		"add up to the whole change. Each share is in two parts, its gap's (what the layer costs on one path over the other) and its level's " +
		"(its mean over both paths, which both pay). Named is the layer with the largest share in the direction the speedup moved, by the " +
		"larger of its two parts; layers that pull opposite ways can have shares larger than the change, and the line gives every share.\n\n")
	for _, row := range rows {
		writeShifts(b, row, m.Hosts)
	}
}

// writeLayerRows is a row's layers, a line per layer and the sums and
// their speedup, each host's cell its parts on the row's two paths.
func writeLayerRows(b *strings.Builder, row MatrixRow) {
	base, path := orBase(row.Baseline).Label(), row.Path.Label()
	c := row.Case
	c.Target = ""
	lead := fmt.Sprintf("| %s | %s | %s |", cell(safeText(row.Target)), cell(safeText(c.Label())), cell(safeText(pathPair(row))))
	ref := row.Cells[layersRef(row)].Layers
	for i, p := range ref.Parts {
		fmt.Fprintf(b, "%s %s |", lead, layerTitle(i, p.Layer, row.Stack))
		for _, x := range row.Cells {
			if x == nil || x.Layers == nil || i >= len(x.Layers.Parts) {
				b.WriteString(" – |")
				continue
			}
			q, f := x.Layers.Parts[i], "%s %+.1f µs, %s %+.1f µs"
			if i == 0 {
				f = "%s %.1f µs, %s %.1f µs"
			}
			fmt.Fprintf(b, " "+f+" |", base, q.Baseline/1e3, path, q.Path/1e3)
		}
		b.WriteString("\n")
		lead = "| | | |"
	}
	fmt.Fprintf(b, "%s = p50 |", lead)
	for _, x := range row.Cells {
		if x == nil || x.Layers == nil {
			b.WriteString(" – |")
			continue
		}
		bs, ps := x.Layers.Sums()
		fmt.Fprintf(b, " %s %.1f µs, %s %.1f µs |", base, bs/1e3, path, ps/1e3)
	}
	fmt.Fprintf(b, "\n%s %s p50 / %s p50 |", lead, base, path)
	for _, x := range row.Cells {
		if x == nil || x.Layers == nil {
			b.WriteString(" – |")
			continue
		}
		fmt.Fprintf(b, " %.2f× |", x.Layers.Speedup())
	}
	b.WriteString("\n")
}

// writeShifts is a line per host of the row but its reference: the layer
// that moved its speedup most, or why it has none.
func writeShifts(b *strings.Builder, row MatrixRow, hosts []MatrixHost) {
	c := row.Case
	c.Target = ""
	fmt.Fprintf(b, "%s, %s, %s:\n\n", safeText(row.Target), safeText(c.Label()), safeText(pathPair(row)))
	ref := layersRef(row)
	refLabel := safeText(hosts[ref].Label)
	for i, x := range row.Cells {
		label := safeText(hosts[i].Label)
		switch {
		case x == nil:
			fmt.Fprintf(b, "- %s: its file has no such case.\n", label)
		case x.Layers == nil:
			fmt.Fprintf(b, "- %s: no layers: its file does not split this case (it was run without `--explain`, or without floor and echo on these paths).\n", label)
		case i == ref:
			fmt.Fprintf(b, "- %s: the reference: %s p50 / %s p50 %.2f×.\n", label, orBase(row.Baseline).Label(), row.Path.Label(), x.Layers.Speedup())
		case x.Shift == nil:
			fmt.Fprintf(b, "- %s: its layers and %s's cannot be set against each other (a mix of them has no positive p50).\n", label, refLabel)
		default:
			fmt.Fprintf(b, "- %s\n", shiftWords(row, label, refLabel, x, row.Cells[ref]))
		}
	}
	b.WriteString("\n")
}

// shiftWords is host's line: its speedup against the reference's, and
// the layer whose move accounts for most of the change, in figures.
func shiftWords(row MatrixRow, host, ref string, x, refCell *MatrixCell) string {
	s := x.Shift
	base, path := orBase(row.Baseline).Label(), row.Path.Label()
	w := fmt.Sprintf("%s: %s p50 / %s p50 is %.2f× on %s against %.2f× on %s (%+.3f)", host, base, path, s.Speedup, host, s.Reference, ref, s.Speedup-s.Reference)
	i := shareIndex(s, s.Layer)
	if i < 0 {
		return w + "; no layer moved it."
	}
	h, r := x.Layers.Parts[i], refCell.Layers.Parts[i]
	name := layerName(s.Layer, row.Stack)
	sh := s.Shares[i]
	parts := fmt.Sprintf("its gap %+.3f, its level %+.3f", sh.Gap, sh.Level)
	if s.By == "level" {
		parts = fmt.Sprintf("its level %+.3f, its gap %+.3f", sh.Level, sh.Gap)
	}
	w += fmt.Sprintf("; the layer that moved it most is %s (%+.3f: %s)", name, sh.Share, parts)
	if s.By == "gap" {
		w += fmt.Sprintf(": it costs %s over %s than over %s on %s (%.1f against %.1f µs), against %s on %s (%.1f against %.1f µs)",
			moreOrLess(h.Baseline-h.Path), base, path, host, h.Baseline/1e3, h.Path/1e3, moreOrLess(r.Baseline-r.Path), ref, r.Baseline/1e3, r.Path/1e3)
	} else {
		w += fmt.Sprintf(", which both paths pay: a mean of %.1f µs on %s (%.1f over %s, %.1f over %s), against %.1f µs on %s (%.1f and %.1f)",
			(h.Baseline+h.Path)/2e3, host, h.Baseline/1e3, base, h.Path/1e3, path, (r.Baseline+r.Path)/2e3, ref, r.Baseline/1e3, r.Path/1e3)
	}
	var others []string
	for j, sh := range s.Shares {
		if j != i {
			others = append(others, fmt.Sprintf("%s %+.3f", layerName(sh.Layer, row.Stack), sh.Share))
		}
	}
	return w + fmt.Sprintf("; the others: %s (the shares add up to %+.3f).", strings.Join(others, ", "), s.Speedup-s.Reference)
}

// shareIndex is layer's index among s's shares, -1 for none.
func shareIndex(s *results.Shift, layer string) int {
	for i, x := range s.Shares {
		if layer != "" && x.Layer == layer {
			return i
		}
	}
	return -1
}

// moreOrLess is a gap in words: "3.1 µs more", "0.4 µs less".
func moreOrLess(ns float64) string {
	if ns < 0 {
		return fmt.Sprintf("%.1f µs less", -ns/1e3)
	}
	return fmt.Sprintf("%.1f µs more", ns/1e3)
}

// layerTitle is a layer's line in the table: "kernel floor", "+ Go
// client runtime", "+ server work and protocol".
func layerTitle(i int, layer, stack string) string {
	t := strings.TrimPrefix(strings.Replace(layerName(layer, stack), "server's", "server", 1), "the ")
	if i > 0 {
		t = "+ " + t
	}
	return t
}

// layerName names a layer for people: "the kernel floor", "the Go client
// runtime", "the python client", "the server's work and protocol".
func layerName(layer, stack string) string {
	switch layer {
	case results.LayerKernel:
		return "the kernel floor"
	case results.LayerClient:
		if stack == "" {
			return "the Go client runtime"
		}
		return "the " + safeText(stack) + " client"
	case results.LayerServer:
		return "the server's work and protocol"
	}
	return safeText(layer)
}
