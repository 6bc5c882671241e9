package reports

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// Each case's verdict: its words, and the Markdown lines that back it (the
// intervals, the noisy blocks, the p50 of each round or server instance).

// verdictWords are the words each verdict starts with.
var verdictWords = map[results.VerdictKind]string{
	results.UnixFaster:      "Unix faster",
	results.TCPFaster:       "TCP faster",
	results.NoDifference:    "no meaningful difference",
	results.Undecided:       "undecided: run longer",
	results.NotSignificant:  "undecided: run longer",
	results.TooFewPairs:     "not enough block pairs for an interval",
	results.TooFewInstances: fmt.Sprintf("not enough server instances for an interval (%d are needed)", results.MinInstances),
	results.NoResult:        "no result: every op failed on one transport",
}

// Verdict puts a case's verdict in words, with its interval; comparisons
// is how many cases the report has (Holm's adjustment is over them).
func Verdict(s *results.Summary, comparisons int) string {
	ci, words := s.UnixSpeedupP50CI, verdictWords[s.VerdictKind]
	if s.VerdictKind == results.NoResult {
		return words
	}
	if s.VerdictKind == results.TooFewInstances {
		return words
	}
	if ci == nil || words == "" {
		return verdictWords[results.TooFewPairs]
	}
	band := fmt.Sprintf("%.0f%%", 100*results.Band)
	switch s.VerdictKind {
	case results.NoDifference:
		return fmt.Sprintf("%s: %s, within the ±%s band", words, speedupCI(ci), band)
	case results.NotSignificant:
		return fmt.Sprintf("%s: %s, but not significant after Holm's adjustment for %d comparisons (p = %.3g)",
			words, speedupCI(ci), comparisons, s.PValueHolm)
	case results.UnixFaster, results.TCPFaster:
		lower, lo, hi := lowerLatency(s.VerdictKind, ci)
		return fmt.Sprintf("%s: %.1f%% lower p50 latency (95%% CI %.1f%%–%.1f%%; TCP/Unix %.3f×)", words, lower, lo, hi, ci.Center)
	}
	more := "more than 100× the ops would be needed: the difference, if any, is too small to resolve on this machine"
	if n := results.MoreBlockPairs(ci); !math.IsInf(n, 1) && ci.Instances > 1 {
		more = fmt.Sprintf("about %.0f× the server instances (more --instances) would likely settle it", n)
	} else if !math.IsInf(n, 1) {
		more = fmt.Sprintf("about %.0f× the block pairs (more --rounds, or --precision) would likely settle it", n)
	}
	return fmt.Sprintf("%s: %s straddles 1 and is wider than the ±%s band; %s", words, speedupCI(ci), band, more)
}

// ShortVerdict is a verdict's first words, for the headline table:
// "Unix faster: 19.4% lower p50", "no meaningful difference", ...
func ShortVerdict(s *results.Summary) string {
	ci := s.UnixSpeedupP50CI
	switch {
	case s.VerdictKind == results.NoResult, s.VerdictKind == results.TooFewInstances:
		return verdictWords[s.VerdictKind]
	case ci == nil:
		return verdictWords[results.TooFewPairs]
	case s.VerdictKind == results.UnixFaster, s.VerdictKind == results.TCPFaster:
		lower, _, _ := lowerLatency(s.VerdictKind, ci)
		return fmt.Sprintf("%s: %.1f%% lower p50", verdictWords[s.VerdictKind], lower)
	}
	return verdictWords[s.VerdictKind]
}

// lowerLatency is how much lower, in percent, the faster transport's p50
// latency is than the other's, with the interval's bounds: for a speedup
// TCP/Unix of r, 1 − 1/r for Unix, 1 − r for TCP. It cannot be read
// backwards as "TCP/Unix − 1" can (a 1.41× speedup is 29% lower latency,
// not 41%).
func lowerLatency(kind results.VerdictKind, ci *results.Interval) (center, lo, hi float64) {
	if kind == results.TCPFaster {
		return 100 * (1 - ci.Center), 100 * (1 - ci.Hi), 100 * (1 - ci.Lo)
	}
	return 100 * (1 - 1/ci.Center), 100 * (1 - 1/ci.Lo), 100 * (1 - 1/ci.Hi)
}

func speedupCI(ci *results.Interval) string {
	return fmt.Sprintf("speedup %.3f× (95%% CI %.3f–%.3f)", ci.Center, ci.Lo, ci.Hi)
}

// withVerdicts writes every case's verdict in words into r (the JSON's
// "verdict"), from its kind; reports read before kinds existed keep their
// words.
func withVerdicts(r *results.Report) *results.Report {
	for i := range r.Summary {
		s := &r.Summary[i]
		if s.VerdictKind != "" {
			s.Verdict = Verdict(s, comparisons(r))
		}
		for j := range s.Paths {
			if p := &s.Paths[j]; p.VerdictKind != "" {
				p.Verdict = PathVerdict(p)
			}
		}
	}
	return r
}

// comparisons is how many comparisons Holm's adjustment is over: each
// case's Unix against TCP, and each further path's.
func comparisons(r *results.Report) int {
	n := len(r.Summary)
	for _, s := range r.Summary {
		n += len(s.Paths)
	}
	return n
}

// writeVerdict gives the paired speedup intervals, the verdict and the
// noisy blocks.
func writeVerdict(b *strings.Builder, sum *results.Summary) {
	if sum.UnixSpeedupP50 <= 0 {
		return
	}
	ci := func(c *results.Interval) string {
		return fmt.Sprintf("%.3f× (95%% CI %.3f–%.3f)", c.Center, c.Lo, c.Hi)
	}
	if c := sum.UnixSpeedupP50CI; c != nil && c.Instances > 1 {
		var each []string
		for _, s := range sum.InstanceSpeedups {
			each = append(each, fmt.Sprintf("%.3f×", s))
		}
		fmt.Fprintf(b, "Speedup over %d server instances (p50 speedups %s; %d block pairs in %s): %s at p50, %s at mean; sign test over instances p %s",
			c.Instances, strings.Join(each, ", "), c.Pairs, plural(c.Rounds, "round"), ci(c), ci(sum.UnixSpeedupMeanCI), pValue(sum.PValue))
	} else if c != nil {
		fmt.Fprintf(b, "Paired speedup over %d block pairs in %s: %s at p50, %s at mean; sign test p %s",
			c.Pairs, plural(c.Rounds, "round"), ci(c), ci(sum.UnixSpeedupMeanCI), pValue(sum.PValue))
	}
	if sum.UnixSpeedupP50CI != nil {
		if sum.PValueHolm != sum.PValue {
			fmt.Fprintf(b, " (Holm-adjusted p %s)", pValue(sum.PValueHolm))
		}
		b.WriteString(". ")
	}
	fmt.Fprintf(b, "**Verdict: %s", sum.Verdict) // written by withVerdicts
	switch {
	case sum.VerdictKind == results.TooFewInstances:
		fmt.Fprintf(b, " (give --instances %d or more)", results.MinInstances)
	case sum.UnixSpeedupP50CI == nil:
		fmt.Fprintf(b, " (%d are needed; run more --rounds or --blocks)", results.MinPairs)
	}
	if len(sum.Warnings) > 0 {
		b.WriteString("; but see the warning below")
	}
	b.WriteString(".**")
	switch sum.EndedBy {
	case "precision":
		b.WriteString(" The case ended when the p50 speedup was precise enough (--precision).")
	case "max-duration":
		b.WriteString(" The case ended at --max-duration before the p50 speedup was as precise as --precision asked.")
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
	unit := pickUnit(sum.TCP.Latency.P50, sum.Unix.Latency.P50)
	var parts []string
	for i, nb := range sum.NoisyBlocks {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("and %d more (in the JSON)", len(sum.NoisyBlocks)-i))
			break
		}
		where := fmt.Sprintf("round %d", nb.Round)
		if nb.Instance > 1 || sum.UnixSpeedupP50CI != nil && sum.UnixSpeedupP50CI.Instances > 1 {
			where = fmt.Sprintf("instance %d", nb.Instance)
		}
		parts = append(parts, fmt.Sprintf("%s at %s (%s, p50 %s %s, z %.1f)", nb.Transport.Label(),
			time.Duration(nb.StartNs).Round(time.Millisecond), where, unit.fmt(float64(nb.P50)), unit.name, nb.Z))
	}
	fmt.Fprintf(b, "Noisy blocks: %d of %d, kept in every figure: %s.\n\n", len(sum.NoisyBlocks), sum.Blocks, strings.Join(parts, "; "))
}

// writeRounds lists p50 per round so a reader can see whether rounds agree.
func writeRounds(b *strings.Builder, r *results.Report, c results.Case, unit unit) {
	type pair struct{ tcp, unix string }
	type key struct{ instance, round int }
	var rounds []key
	byRound := map[key]*pair{}
	for _, run := range r.Runs {
		if run.Case != c {
			continue
		}
		k := key{run.Instance, run.Round}
		p, ok := byRound[k]
		if !ok {
			p = &pair{"–", "–"}
			byRound[k] = p
			rounds = append(rounds, k)
		}
		v := unit.fmt(float64(run.Latency.P50))
		if run.Incomplete {
			v += " (incomplete)"
		}
		if run.Transport == drivers.TCP {
			p.tcp = v
		} else {
			p.unix = v
		}
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
		parts = append(parts, fmt.Sprintf("%s TCP %s / Unix %s", name, byRound[k].tcp, byRound[k].unix))
	}
	b.WriteString(strings.Join(parts, "; ") + ".\n\n")
}
