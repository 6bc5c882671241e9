package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// A run at a rate (an open loop) is read at the application's load: the
// headline gives, for each case, what the generator offered and reached,
// the p50 and the p99 of each path, the lookups each path's server serves
// per CPU core (the capacity), each comparison with its interval, and
// which of them moved.

// atLoad says whether the report is of a run at a rate.
func atLoad(r *results.Report) bool {
	for _, s := range r.Summary {
		if s.Rate > 0 {
			return true
		}
	}
	return false
}

// writeLoadHeadline is the headline table of a run at a rate.
func writeLoadHeadline(b *strings.Builder, r *results.Report) {
	base := baseOf(r)
	bl := base.Label()
	fmt.Fprintf(b, "| %s | server | offered | reached (%s / Unix) | p50 (%s / Unix) | p50 speedup (95%% CI) | p99 (%s / Unix) | p99 speedup (95%% CI) | lookups per server core (%s / Unix) | capacity gain (95%% CI) | what moved |\n",
		firstColumn(r), bl, bl, bl, bl)
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	sweep := len(r.Summary) > len(r.Targets)
	for i, s := range r.Summary {
		if i > 0 && r.Summary[i-1].Target != s.Target {
			writeSkippedAtLoad(b, r, r.Summary[i-1].Target) // a target's skipped stacks below its rows
		}
		bs, us := s.Side(base), s.Side(results.Socket())
		c := s.ComparisonOf(results.Socket())
		lat := func(p50 bool) string {
			x, y := bs.Latency.P99, us.Latency.P99
			if p50 {
				x, y = bs.Latency.P50, us.Latency.P50
			}
			u := pickUnit(x, y)
			return u.fmt(float64(x)) + " / " + u.fmt(float64(y)) + " " + u.name
		}
		p50, p99, capGain := "–", "–", "–"
		if c != nil {
			p50 = ratioCI(c.SpeedupP50, c.SpeedupP50CI)
			if c.Tail != nil {
				p99 = ratioCI(c.Tail.Ratio, c.Tail.CI)
			}
			if c.Capacity != nil {
				capGain = ratioCI(c.Capacity.Ratio, c.Capacity.CI)
			}
		}
		if failed, ok := caseFailed(r, &s); ok {
			fmt.Fprintf(b, "| %s | %s | %s/s | – | – | – | – | – | – | – | %s |\n", cell(rowName(r, s, sweep)), cell(serverOf(r, s.Target)),
				words.Thousands(s.Rate), failed)
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s/s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(rowName(r, s, sweep)), cell(serverOf(r, s.Target)),
			words.Thousands(s.Rate), reached(bs, us), lat(true), p50, lat(false), p99, perCore(bs, us), capGain, cell(moved(&s, c)))
	}
	if n := len(r.Summary); n > 0 {
		writeSkippedAtLoad(b, r, r.Summary[n-1].Target)
	}
	for _, t := range r.Targets { // a target without a result: failed, or skipped from every stack asked for
		if !slices.ContainsFunc(r.Summary, func(s results.Summary) bool { return s.Target == t.Name }) {
			writeSkippedAtLoad(b, r, t.Name)
			if t.Error != "" {
				fmt.Fprintf(b, "| %s | %s |%s not measured (see its details) |\n", cell(t.Name), cell(orUnknown(serverColumnOrNone(t))), strings.Repeat(" – |", 8))
			}
		}
	}
	b.WriteString("\n")
	writeObjectives(b, r)
	for _, s := range r.Summary {
		if line := coresLine(&s, base, r.Environment.NumCPU); line != "" {
			b.WriteString(line + "\n\n")
		}
	}
}

// writeSkippedAtLoad gives a row of the load headline to each client
// stack target was not measured from, with the reason.
func writeSkippedAtLoad(b *strings.Builder, r *results.Report, target string) {
	for _, t := range r.Targets {
		if t.Name != target {
			continue
		}
		for _, sk := range t.Skipped {
			fmt.Fprintf(b, "| %s from %s | %s |%s skipped: %s |\n", cell(t.Name), cell(sk.Stack), cell(orUnknown(serverColumnOrNone(t))),
				strings.Repeat(" – |", 8), cell(sk.Reason))
		}
	}
}

// writeObjectives gives each group of cases measured at several rates its
// paths' highest rate within the objective, and the headroom between
// them: "redis: within p99 < 2ms, TCP held up to 8,000/s and the Unix
// socket up to 16,000/s (of 2,000, 4,000, 8,000, 16,000/s): 2.00× the
// headroom".
func writeObjectives(b *strings.Builder, r *results.Report) {
	o := r.Config.SLO
	if o == nil || len(r.Objectives) == 0 {
		return
	}
	how := "measured"
	if r.Config.RateAuto {
		how = fmt.Sprintf("found by doubling the rate from %s/s until no path held it", words.Thousands(1000))
	}
	fmt.Fprintf(b, "**Highest rate within the objective %s** (a path holds a rate when its generator kept the schedule there, at most %s of its ops failed (a failed op is within no limit) and its %s, from each op's intended start, is within the limit; its highest rate is the highest it held with every lower rate held too; rates %s):\n\n",
		o, fmt.Sprintf("%g%%", 100*o.ErrorShare()), o.Percentile, how)
	b.WriteString("| case | path | highest rate held | rates measured (held ✓, not ✗) | headroom over the baseline |\n|---|---|--:|---|--:|\n")
	base := baseOf(r)
	for _, res := range r.Objectives {
		name := res.Case.Target + ": " + res.Case.Label() // the label names the stack
		for _, c := range res.Capacities {
			highest, head := "none", "–"
			if c.HighestRate > 0 {
				highest = words.Thousands(c.HighestRate) + "/s"
			}
			if c.AtLeast {
				highest = "≥ " + highest + " (every rate held: measure higher)"
			}
			if c.HeldAbove > 0 {
				highest += " (also held " + words.Thousands(c.HeldAbove) + "/s, above a rate it missed: not counted)"
			}
			if h, ok := res.Headroom[c.Path]; ok {
				head = headroomText(h, res.HeadroomAtLeast[c.Path], res.HeadroomAtMost[c.Path])
			} else if c.Path == base {
				head = "(baseline)"
			}
			var steps []string
			for i, rate := range c.Rates {
				mark := "✗"
				if c.Held[i] {
					mark = "✓"
				}
				steps = append(steps, words.Thousands(rate)+" "+mark)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", cell(name), c.Path.Label(), highest, strings.Join(steps, ", "), head)
		}
	}
	b.WriteString("\n")
}

// headroomText is a headroom in words: "2.00×", a lower bound "≥ 2.00×"
// (the path held every rate measured), an upper one "≤ 0.50×" (the
// baseline did).
func headroomText(h float64, atLeast, atMost bool) string {
	switch {
	case atLeast:
		return fmt.Sprintf("≥ %.2f× (it held every rate)", h)
	case atMost:
		return fmt.Sprintf("≤ %.2f× (the baseline held every rate)", h)
	}
	return fmt.Sprintf("%.2f×", h)
}

// firstColumn names the headline's first column.
func firstColumn(r *results.Report) string {
	if len(r.Config.Clients) > 0 {
		return "target and client"
	}
	return "target"
}

// serverOf is target's server column.
func serverOf(r *results.Report, target string) string {
	for _, t := range r.Targets {
		if t.Name == target && t.Server.Product != "" {
			return serverColumn(t)
		}
	}
	return "–"
}

// ratioCI is "1.19× (1.12–1.25)", or the ratio alone without an interval.
func ratioCI(x float64, ci *results.Interval) string {
	if x <= 0 {
		return "–"
	}
	if ci == nil {
		return fmt.Sprintf("%.2f×", x)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
}

// reached is each side's lowest block rate, with a mark where the
// generator fell behind.
func reached(sides ...results.Side) string {
	var parts []string
	for _, s := range sides {
		g := s.Generator
		if g == nil {
			parts = append(parts, "–")
			continue
		}
		v := words.Thousands(g.AchievedRate)
		if g.FellBehind {
			v += " (behind)"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, " / ")
}

// perCore is the lookups each side's server serves per second of one CPU
// core: 1 s over its CPU per op.
func perCore(sides ...results.Side) string {
	var parts []string
	for _, s := range sides {
		if s.CPU == nil || s.CPU.ServerNsPerOp == nil || *s.CPU.ServerNsPerOp <= 0 {
			parts = append(parts, "–")
			continue
		}
		parts = append(parts, words.Thousands(1e9 / *s.CPU.ServerNsPerOp))
	}
	return strings.Join(parts, " / ")
}

// moved says which of p50, p99 and capacity moved, and to which side, or
// that the generator fell behind (no side wins at this rate).
func moved(s *results.Summary, c *results.Comparison) string {
	if c == nil {
		return words.ShortVerdict(s, &results.Comparison{})
	}
	if c.VerdictKind == results.FellBehind {
		return "the generator fell behind: no winner at this rate"
	}
	var out []string
	for _, m := range []struct {
		name string
		kind results.VerdictKind
	}{{"p50", c.VerdictKind}, {"p99", pairedKind(c.Tail)}, {"capacity", pairedKind(c.Capacity)}} {
		switch m.kind {
		case results.UnixFaster, results.PathFaster:
			out = append(out, m.name+": Unix better")
		case results.TCPFaster, results.BaselineFaster:
			out = append(out, m.name+": "+c.Baseline.Label()+" better")
		}
	}
	if len(out) == 0 {
		return "none moved beyond its interval"
	}
	return strings.Join(out, "; ")
}

func pairedKind(p *results.Paired) results.VerdictKind {
	if p == nil {
		return ""
	}
	return p.Kind
}

// coresLine says, for a case at a rate, the server cores each path cost
// at the rate its generator reached (its CPU per op times that rate: the
// offered rate, where the generator kept up, is within 1% of it) and the
// capacity the socket buys: "redis at 3,000/s: 0.196 server cores over
// TCP, 0.165 over the Unix socket; the socket serves 19% more lookups per
// server core (95% CI 12%–25%)". Where a generator fell behind, the
// offered rate was never reached: the cores are said at the rates
// reached, each named. A figure above the machine's logical CPUs (cpus)
// is said to be so.
func coresLine(s *results.Summary, base drivers.Transport, cpus int) string {
	bs, ok := s.SideOf(base)
	us := s.Side(results.Socket())
	if !ok || s.Rate <= 0 || bs.CPU == nil || bs.CPU.ServerNsPerOp == nil || us.CPU == nil || us.CPU.ServerNsPerOp == nil ||
		bs.Generator == nil || us.Generator == nil {
		return ""
	}
	who := s.Target
	if s.Stack != "" {
		who += " from " + s.Stack // the stacks' cases of a target, told apart
	}
	cores := func(side results.Side) (figure, note string) {
		c := side.Generator.AchievedRate * *side.CPU.ServerNsPerOp / 1e9
		if cpus > 0 && c > float64(cpus) {
			note = fmt.Sprintf(" (more than the %d logical CPUs dbsock saw on this machine)", cpus)
		}
		return fmt.Sprintf("%.3f", c), note
	}
	bc, bn := cores(bs)
	uc, un := cores(us)
	line := fmt.Sprintf("%s at %s/s: %s server cores over %s%s, %s over the Unix socket%s", who, words.Thousands(s.Rate), bc, base.Label(), bn, uc, un)
	if bs.Generator.FellBehind || us.Generator.FellBehind {
		line = fmt.Sprintf("%s at %s/s offered, which the generator fell behind (the cores at the rates it reached): %s server cores over %s at %s/s%s, %s over the Unix socket at %s/s%s",
			who, words.Thousands(s.Rate), bc, base.Label(), words.Thousands(bs.Generator.AchievedRate), bn, uc, words.Thousands(us.Generator.AchievedRate), un)
	}
	if c := s.ComparisonOf(results.Socket()); c != nil && c.Capacity != nil && c.Capacity.CI != nil {
		ci := c.Capacity.CI
		more := "more"
		if ci.Center < 1 {
			more = "fewer"
		}
		line += fmt.Sprintf("; the socket serves %.0f%% %s lookups per server core (95%% CI %+.0f%% to %+.0f%%, %d block pairs)",
			math.Abs(ci.Center-1)*100, more, (ci.Lo-1)*100, (ci.Hi-1)*100, ci.Pairs)
	}
	g := us.Generator
	line += fmt.Sprintf(". The generator: schedule lag p50 %s / %s, p99 %s / %s (%s / Unix)", lagText(bs.Generator.LagP50Ns), lagText(g.LagP50Ns),
		lagText(bs.Generator.LagP99Ns), lagText(g.LagP99Ns), base.Label())
	line += fmt.Sprintf("; its own CPU per op %.1f / %.1f µs", bs.CPU.ClientNsPerOp/1e3, us.CPU.ClientNsPerOp/1e3)
	if bs.CPU.ClientCsw > 0 && us.CPU.ClientCsw > 0 {
		// The evidence beside the capacity: a client woken more over the
		// socket takes back what it saves the server (its warning says so).
		line += fmt.Sprintf(", its context switches per op %.2f / %.2f", bs.CPU.ClientCswPerOp, us.CPU.ClientCswPerOp)
	}
	return line + "."
}

func lagText(ns int64) string {
	if ns >= 1e6 {
		return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(ns)/1e3)
}
