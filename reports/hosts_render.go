package reports

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// A report of several hosts in Markdown, JSON and CSV.

// HostsFormats are the formats a report of several hosts is written in.
var HostsFormats = []string{"markdown", "json", "csv"}

// WriteHosts renders h in format to w; summary leaves the host facts out
// of the Markdown.
func WriteHosts(ctx context.Context, w io.Writer, format string, h *Hosts, summary bool) error {
	if err := interrupted(ctx); err != nil {
		return err
	}
	switch format {
	case "markdown", "md":
		return HostsMarkdown(w, h, summary)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(h)
	case "csv":
		return HostsCSV(w, h)
	}
	return fmt.Errorf("a report of several hosts is written as %s, not %s", strings.Join(HostsFormats, ", "), format)
}

// HostsMarkdown writes h as Markdown: what a cell is, each matrix (a
// heading per group), the picture, and each matrix's host facts.
func HostsMarkdown(w io.Writer, h *Hosts, summary bool) error {
	b := &strings.Builder{}
	hosts := 0
	for _, m := range h.Matrices {
		hosts += len(m.Hosts)
	}
	fmt.Fprintf(b, "# Each host's own comparison of paths, %s side by side\n\n", plural(hosts, "result file"))
	b.WriteString("Each cell is one host's own paired comparison, as that host's report gives it: the p50 speedup " +
		"(the baseline's p50 over the path's, paired block by block on that host) with its 95% interval and its verdict. " +
		"No cell divides one host's latency by another's; compare the hosts by their speedups and intervals.\n\n")
	for _, m := range h.Matrices {
		writeMatrix(b, m, len(h.Matrices) > 1)
		writeHostLayers(b, m)
	}
	if h.Plot != "" {
		fmt.Fprintf(b, "![Each host's speedup at p50 with its 95%% interval, a row per case](%s)\n\n", h.Plot)
	}
	if !summary {
		for _, m := range h.Matrices {
			writeFacts(b, m, len(h.Matrices) > 1)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// groupTitle names a group by its --by values: "scenario pk".
func groupTitle(m Matrix) string {
	var parts []string
	for _, g := range m.Group {
		parts = append(parts, g.Field+" "+g.Value)
	}
	return strings.Join(parts, ", ")
}

// writeMatrix is one matrix: a row per case and pair of paths, a column
// per host.
func writeMatrix(b *strings.Builder, m Matrix, titled bool) {
	if titled || len(m.Group) > 0 {
		fmt.Fprintf(b, "## %s\n\n", safeText(groupTitle(m)))
	}
	b.WriteString("| target | case | paths |")
	for _, h := range m.Hosts {
		fmt.Fprintf(b, " %s |", cell(safeText(h.Label)))
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("--:|", len(m.Hosts)) + "\n")
	warned := false
	for _, row := range m.Rows {
		c := row.Case
		c.Target = ""
		fmt.Fprintf(b, "| %s | %s | %s |", cell(safeText(row.Target)), cell(safeText(c.Label())), cell(safeText(pathPair(row))))
		for _, x := range row.Cells {
			fmt.Fprintf(b, " %s |", cell(safeText(cellWords(x))))
			warned = warned || x != nil && x.Warned
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if warned {
		b.WriteString("† That host's report has a warning on this case or its target: its details say why.\n\n")
	}
	if d := differingFacts(m); len(m.Hosts) > 1 && d != "" {
		fmt.Fprintf(b, "The hosts differ in %s.\n\n", d)
	} else if len(m.Hosts) > 1 {
		b.WriteString("The hosts differ in none of the facts dbsock records.\n\n")
	}
	for _, row := range m.Rows {
		for _, x := range row.Cells {
			if x == nil {
				b.WriteString("– That host's file has no such case.\n\n")
				return
			}
		}
	}
}

// differingFacts names the facts in which m's hosts differ: "placement,
// date and vulnerability meltdown" ("" for none).
func differingFacts(m Matrix) string {
	var names []string
	for _, f := range m.Facts {
		if f.Differs {
			names = append(names, safeText(f.Name))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// cellWords is a cell in words: "1.36× (1.34–1.39), Unix faster: 26.4%
// lower p50", "–" where the host has no such case.
func cellWords(x *MatrixCell) string {
	if x == nil {
		return "–"
	}
	s := "no result"
	switch {
	case x.SpeedupP50CI != nil:
		s = fmt.Sprintf("%.2f× (%.2f–%.2f)", x.SpeedupP50CI.Center, x.SpeedupP50CI.Lo, x.SpeedupP50CI.Hi)
	case x.SpeedupP50 > 0:
		s = fmt.Sprintf("%.2f× (no interval)", x.SpeedupP50)
	}
	s += ", " + x.Short
	if x.Warned {
		s += " †"
	}
	return s
}

// writeFacts is a matrix's host facts, a column per host, those that
// differ marked ≠.
func writeFacts(b *strings.Builder, m Matrix, titled bool) {
	title := "Hosts"
	if titled || len(m.Group) > 0 {
		title += ": " + groupTitle(m)
	}
	fmt.Fprintf(b, "## %s\n\n", safeText(title))
	b.WriteString("≠ marks a fact in which the hosts differ: what moves the answer from host to host is among them.\n\n")
	b.WriteString("| | fact |")
	for _, h := range m.Hosts {
		fmt.Fprintf(b, " %s |", cell(safeText(h.Label)))
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(m.Hosts)) + "\n")
	for _, f := range m.Facts {
		mark := ""
		if f.Differs {
			mark = "≠"
		}
		fmt.Fprintf(b, "| %s | %s |", mark, cell(safeText(f.Name)))
		for _, v := range f.Values {
			fmt.Fprintf(b, " %s |", cell(safeText(orDash(v))))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// HostsCSVHeader is the header row of a report of several hosts as CSV:
// one row per matrix row and host; the columns after verdict are the
// host's layers (--explain) and how its speedup moved from the row's
// reference host's (empty where its file does not split the case).
var HostsCSVHeader = append([]string{"group", "target", "scenario", "concurrency", "value_size", "mode", "op", "rate", "pipeline", "stack", "placement",
	"baseline", "path", "host", "file", "speedup_p50", "speedup_p50_lo", "speedup_p50_hi", "verdict_kind", "verdict"}, layerColumns...)

// csvLayers are the layers a row of the CSV gives, in its columns' order.
var csvLayers = []string{results.LayerKernel, results.LayerClient, results.LayerServer}

// layerColumns are the CSV's columns of the layers.
var layerColumns = func() []string {
	var out []string
	for _, l := range csvLayers {
		out = append(out, l+"_baseline_ns", l+"_path_ns")
	}
	out = append(out, "layers_speedup", "shift_against", "shift_against_speedup", "shift_layer", "shift_by")
	for _, l := range csvLayers {
		out = append(out, l+"_share")
	}
	return out
}()

// layerRecord is x's values of layerColumns.
func layerRecord(x *MatrixCell) []string {
	out := make([]string, len(layerColumns))
	if x.Layers == nil {
		return out
	}
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	for _, p := range x.Layers.Parts {
		if i := slices.Index(csvLayers, p.Layer); i >= 0 {
			out[2*i], out[2*i+1] = f(p.Baseline, 1), f(p.Path, 1)
		}
	}
	n := 2 * len(csvLayers)
	out[n] = f(x.Layers.Speedup(), 4)
	if s := x.Shift; s != nil {
		out[n+1], out[n+2], out[n+3], out[n+4] = x.Against, f(s.Reference, 4), s.Layer, s.By
		for _, sh := range s.Shares {
			if i := slices.Index(csvLayers, sh.Layer); i >= 0 {
				out[n+5+i] = f(sh.Share, 4)
			}
		}
	}
	return out
}

// HostsCSV writes one row per case, pair of paths and host (a host
// without the case has no row).
func HostsCSV(w io.Writer, h *Hosts) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(HostsCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	for _, m := range h.Matrices {
		for _, row := range m.Rows {
			c := row.Case
			for i, x := range row.Cells {
				if x == nil {
					continue
				}
				lo, hi := "", ""
				if ci := x.SpeedupP50CI; ci != nil {
					lo, hi = f(ci.Lo), f(ci.Hi)
				}
				rec := []string{groupTitle(m), c.Target, c.Scenario, strconv.Itoa(c.Concurrency), strconv.Itoa(c.ValueSize), c.Mode, c.Op,
					strconv.FormatFloat(c.Rate, 'g', -1, 64), strconv.Itoa(c.Pipeline), c.Stack, c.Placement,
					string(orBase(row.Baseline)), string(row.Path), m.Hosts[i].Label, m.Hosts[i].File,
					f(x.SpeedupP50), lo, hi, string(x.VerdictKind), x.Verdict}
				if err := cw.Write(append(rec, layerRecord(x)...)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// orBase is a comparison's baseline, the default where a file left it
// out.
func orBase(t drivers.Transport) drivers.Transport {
	if t == "" {
		return results.DefaultBaseline()
	}
	return t
}
