package reports

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// The further paths of a run (--paths beyond tcp and unix): each case's
// comparison of a path with TCP, in a table of its own under the headline,
// so that a two-path report reads as it always did.

// pathLabel names a path for people in a table's row: "TCP6 ([::1])",
// and a control says so.
func pathLabel(p drivers.Transport) string {
	if p.Control() {
		return p.Info().Title + ": A/A control"
	}
	return p.Info().Title
}

// baseOf is the path r's cases are compared with (--baseline; the default,
// TCP, unless it named another).
func baseOf(r *results.Report) drivers.Transport {
	if r.Config.Baseline == "" {
		return results.DefaultBaseline()
	}
	return r.Config.Baseline
}

// baseTitle names the baseline in sentences: "TCP on 127.0.0.1", "TLS
// (127.0.0.1)".
func baseTitle(t drivers.Transport) string {
	if t == results.DefaultBaseline() {
		return t.Label() + " on 127.0.0.1"
	}
	return pathLabel(t)
}

// furtherPaths are a case's comparisons of the paths other than the
// socket, in order: the rows of the table of further paths.
func furtherPaths(s *results.Summary) []results.Comparison {
	var out []results.Comparison
	for _, c := range s.Comparisons {
		if c.Path != results.Socket() {
			out = append(out, c)
		}
	}
	return out
}

// writePaths is the table of every further path against TCP, when the run
// has any.
func writePaths(b *strings.Builder, r *results.Report) {
	any := false
	for _, s := range r.Summary {
		any = any || len(furtherPaths(&s)) > 0
	}
	if !any {
		return
	}
	base := baseOf(r)
	fmt.Fprintf(b, "Other paths to the same servers, each compared with %s by the same paired method (speedup: %s p50 over the path's; above 1, the path is faster), "+
		"and what moving from the path to the Unix socket gains (the path's p50 over Unix's, paired the same way; above 1, the socket is faster):\n\n", baseTitle(base), base.Label())
	fmt.Fprintf(b, "| target | path | %s p50 | path p50 | p50 speedup (95%% CI) | verdict | Unix p50 speedup over the path (95%% CI) |\n|---|---|--:|--:|--:|---|--:|\n", base.Label())
	sweep := len(r.Summary) > len(r.Targets)
	for _, s := range r.Summary {
		name := rowName(r, s, sweep)
		for _, p := range furtherPaths(&s) {
			p, ps := &p, s.Side(p.Path)
			bs, _ := s.SideOf(p.Baseline)
			u := pickUnit(bs.Latency.P50, ps.Latency.P50)
			speed := fmt.Sprintf("%.2f×", p.SpeedupP50)
			if ci := p.SpeedupP50CI; ci != nil {
				speed = fmt.Sprintf("%.2f× (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
			}
			gain := "–"
			if ci := p.UnixGainP50CI; ci != nil {
				gain = fmt.Sprintf("%.2f× (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
			} else if p.UnixGainP50 > 0 {
				gain = fmt.Sprintf("%.2f×", p.UnixGainP50)
			}
			tcp, path := u.fmt(float64(bs.Latency.P50))+" "+u.name, u.fmt(float64(ps.Latency.P50))+" "+u.name
			if p.VerdictKind == results.NoResult {
				tcp, path, speed = okOrDash(bs, tcp), okOrDash(ps, path), "–"
			}
			verdict := words.ShortPathVerdict(p)
			if p.Path.Control() && p.VerdictKind.Winner() {
				verdict += " (noise: an A/A control)"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(name), pathLabel(p.Path), tcp, path, speed, verdict, gain)
		}
	}
	b.WriteString("\n")
	writeControls(b, r)
}

// writeControls says what the run's A/A controls are (drivers.PathInfo's
// Repeats), when it has any: a path with no effect to find, so that its
// verdicts are the run's own false positives.
func writeControls(b *strings.Builder, r *results.Report) {
	for _, t := range reportPaths(r) {
		if !t.Control() {
			continue
		}
		fmt.Fprintf(b, "%s is an A/A control: the route of %s again, over connections of its own, measured like every other path. "+
			"There is no difference to find, so a faster side named on it is noise, a false positive of the same test that judges every path "+
			"(each comparison at 5%%, Holm-corrected over the run's comparisons): read the other paths' verdicts beside it.\n\n", t.Info().Title, t.Route().Info().Phrase)
	}
}

// writePathPhases is the parts of the op on every path of a case with
// further paths (p50s; the table above compares TCP and Unix alone).
func writePathPhases(b *strings.Builder, sum *results.Summary, unit unit) {
	if len(sum.Sides) <= 2 {
		return
	}
	var sides []results.Side
	var names []string
	for _, ps := range sum.Sides {
		sides, names = append(sides, ps.Side), append(names, pathLabel(ps.Path))
	}
	b.WriteString("| part of the op (p50) | " + strings.Join(names, " | ") + " |\n|---" + strings.Repeat("|--:", len(names)) + "|\n")
	for _, name := range phaseOrder {
		cells, any := make([]string, len(sides)), false
		for i, s := range sides {
			cells[i] = "–"
			if ph, ok := s.Phases[name]; ok {
				cells[i], any = unit.fmt(float64(ph.P50)), true
			}
		}
		if any {
			fmt.Fprintf(b, "| %s | %s |\n", phaseTitles[name], strings.Join(cells, " | "))
		}
	}
	cells := make([]string, len(sides))
	for i, s := range sides {
		cells[i] = unit.fmt(float64(s.Latency.P50))
	}
	fmt.Fprintf(b, "| whole op | %s |\n\n(%s; – where the path has no such part, or its driver does not say where it ends)\n\n", strings.Join(cells, " | "), unit.name)
}
