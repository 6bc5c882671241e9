package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// Each case's verdict: its words, and the Markdown lines that back it (the
// intervals, the noisy blocks, the p50 of each round or server instance).

// writeVerdict gives the paired speedup intervals, the verdict and the
// noisy blocks.
func writeVerdict(b *strings.Builder, sum *results.Summary) {
	uc := sum.Against(results.Socket())
	if uc.SpeedupP50 <= 0 {
		return
	}
	ci := func(c *results.Interval) string {
		return fmt.Sprintf("%.3f× (95%% CI %.3f–%.3f)", c.Center, c.Lo, c.Hi)
	}
	// The mean's interval, where the report has one (a report may give
	// the p50's alone).
	mean := ""
	if m := uc.SpeedupMeanCI; m != nil {
		mean = ", " + ci(m) + " at mean"
	}
	if c := uc.SpeedupP50CI; c != nil && c.Instances > 1 {
		var each []string
		for _, s := range uc.InstanceSpeedups {
			each = append(each, fmt.Sprintf("%.3f×", s))
		}
		fmt.Fprintf(b, "Speedup over %d server instances (p50 speedups %s; %d block pairs in %s): %s at p50%s; sign test over instances p %s",
			c.Instances, strings.Join(each, ", "), c.Pairs, plural(c.Rounds, "round"), ci(c), mean, pValue(uc.PValue))
	} else if c != nil {
		fmt.Fprintf(b, "Paired speedup over %d block pairs in %s: %s at p50%s; sign test p %s",
			c.Pairs, plural(c.Rounds, "round"), ci(c), mean, pValue(uc.PValue))
	}
	if uc.SpeedupP50CI != nil {
		if uc.PValueHolm != uc.PValue {
			fmt.Fprintf(b, " (Holm-adjusted p %s)", pValue(uc.PValueHolm))
		}
		b.WriteString(". ")
	}
	fmt.Fprintf(b, "**Verdict: %s", uc.Verdict) // written by words.Fill
	switch {
	case uc.VerdictKind == results.TooFewInstances:
		fmt.Fprintf(b, " (measure %d or more server instances)", results.MinInstances)
	case uc.SpeedupP50CI == nil:
		fmt.Fprintf(b, " (%d are needed; run more rounds or blocks)", results.MinPairs)
	}
	if len(sum.Warnings) > 0 {
		b.WriteString("; but see the warning below")
	}
	b.WriteString(".**")
	switch sum.EndedBy {
	case "precision":
		b.WriteString(" The case ended when the p50 speedup was as precise as its precision goal asked.")
	case "max-duration":
		b.WriteString(" The case ended at the case's time limit before the p50 speedup was as precise as its precision goal asked.")
	}
	b.WriteString("\n\n")
	writeNoisy(b, sum)
}

// pValue is "= 0.0123", or "< 0.0001" for the smallest: read after "p".
func pValue(p float64) string {
	if p < 0.0001 {
		return "< 0.0001"
	}
	return fmt.Sprintf("= %.4f", p)
}

// writeNoisy lists the flagged blocks, so a reader sees when the machine
// was noisy.
func writeNoisy(b *strings.Builder, sum *results.Summary) {
	if len(sum.NoisyBlocks) == 0 {
		if sum.Blocks > 0 {
			fmt.Fprintf(b, "Noisy blocks: none of %d.\n\n", sum.Blocks)
		}
		return
	}
	unit := pickUnit(sum.Side(results.DefaultBaseline()).Latency.P50, sum.Side(results.Socket()).Latency.P50)
	ci := sum.Against(results.Socket()).SpeedupP50CI
	var parts []string
	for i, nb := range sum.NoisyBlocks {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("and %d more (in the JSON)", len(sum.NoisyBlocks)-i))
			break
		}
		where := fmt.Sprintf("round %d", nb.Round)
		if nb.Instance > 1 || ci != nil && ci.Instances > 1 {
			where = fmt.Sprintf("instance %d", nb.Instance)
		}
		parts = append(parts, fmt.Sprintf("%s at %s (%s, p50 %s %s, z %.1f)", nb.Transport.Label(),
			time.Duration(nb.StartNs).Round(time.Millisecond), where, unit.fmt(float64(nb.P50)), unit.name, nb.Z))
	}
	fmt.Fprintf(b, "Noisy blocks: %d of %d, kept in every figure: %s.\n\n", len(sum.NoisyBlocks), sum.Blocks, strings.Join(parts, "; "))
}

// writeRounds lists p50 per round, path by path in the summary's order,
// so a reader can see whether rounds agree.
func writeRounds(b *strings.Builder, r *results.Report, sum *results.Summary, unit unit) {
	type key struct{ instance, round int }
	var rounds []key
	byRound := map[key]map[drivers.Transport]string{}
	for _, run := range r.Runs {
		if run.Case != sum.Case {
			continue
		}
		k := key{run.Instance, run.Round}
		p, ok := byRound[k]
		if !ok {
			p = map[drivers.Transport]string{}
			byRound[k] = p
			rounds = append(rounds, k)
		}
		v := unit.fmt(float64(run.Latency.P50))
		if run.Incomplete {
			v += " (incomplete)"
		}
		p[run.Transport] = v
	}
	if len(rounds) < 2 {
		return
	}
	what := "round"
	if r.Config.Instances > 1 {
		what = "server instance"
	}
	b.WriteString("p50 by " + what + " (" + unit.name + "): ")
	var parts []string
	for _, k := range rounds {
		name := fmt.Sprintf("round %d", k.round)
		switch {
		case r.Config.Instances > 1 && r.Config.Rounds <= 1:
			name = fmt.Sprintf("instance %d", k.instance)
		case r.Config.Instances > 1:
			name = fmt.Sprintf("instance %d round %d", k.instance, k.round)
		}
		var paths []string
		for _, ps := range sum.Sides {
			v, ok := byRound[k][ps.Path]
			if !ok {
				v = "–"
			}
			paths = append(paths, ps.Path.Label()+" "+v)
		}
		parts = append(parts, name+" "+strings.Join(paths, " / "))
	}
	b.WriteString(strings.Join(parts, "; ") + ".\n\n")
}
