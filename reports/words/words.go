// Package words puts a report's verdicts into words: package results
// gives each comparison a kind (results.VerdictKind) and its interval,
// and this package says what they mean, for the report's renderers and for
// the library's Compare alike, so that a verdict reads the same whoever
// wrote the report.
package words

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dbsock/dbsock/results"
)

// verdictWords are the words each verdict starts with.
var verdictWords = map[results.VerdictKind]string{
	results.UnixFaster:      "Unix faster",
	results.TCPFaster:       "TCP faster",
	results.NoDifference:    "no meaningful difference",
	results.Undecided:       "undecided: run longer",
	results.NotSignificant:  "undecided after Holm's adjustment",
	results.TooFewPairs:     "not enough block pairs for an interval",
	results.TooFewInstances: fmt.Sprintf("not enough server instances for an interval (%d are needed)", results.MinInstances),
	results.NoResult:        "no result: every op failed on one transport",
	results.FellBehind:      "the generator fell behind",
}

// Verdict puts a case's verdict, c (the socket against the baseline), in
// words, with its interval; comparisons is how many comparisons the report
// has (Holm's adjustment is over them).
func Verdict(s *results.Summary, c *results.Comparison, comparisons int) string {
	ci, words := c.SpeedupP50CI, verdictWords[c.VerdictKind]
	if c.VerdictKind == results.NoResult {
		return words
	}
	if c.VerdictKind == results.TooFewInstances {
		return words
	}
	if c.VerdictKind == results.FellBehind {
		return FellBehind(s)
	}
	if ci == nil || words == "" {
		return verdictWords[results.TooFewPairs]
	}
	band := fmt.Sprintf("%.0f%%", 100*results.Band)
	switch c.VerdictKind {
	case results.NoDifference:
		return fmt.Sprintf("%s: %s, within the ±%s band", words, SpeedupCI(ci), band)
	case results.NotSignificant:
		return fmt.Sprintf("%s: %s, but not significant after Holm's adjustment for %d comparisons (p = %.3g)%s",
			words, SpeedupCI(ci), comparisons, c.PValueHolm, instancesForHolm(ci, comparisons))
	case results.UnixFaster, results.TCPFaster:
		lower, lo, hi := LowerLatency(c.VerdictKind, ci)
		return fmt.Sprintf("%s: %.1f%% lower p50 latency (95%% CI %.1f%%–%.1f%%; TCP/Unix %.3f×)", words, lower, lo, hi, ci.Center)
	}
	more := "more than 100× the ops would be needed: the difference, if any, is too small to resolve on this machine"
	if n := results.MoreBlockPairs(ci); !math.IsInf(n, 1) && ci.Instances > 1 {
		more = fmt.Sprintf("about %.0f× the server instances (more server instances) would likely settle it", n)
	} else if !math.IsInf(n, 1) {
		more = fmt.Sprintf("about %.0f× the block pairs (more rounds or blocks, or a tighter precision goal) would likely settle it", n)
	}
	return fmt.Sprintf("%s: %s straddles 1 and is wider than the ±%s band; %s", words, SpeedupCI(ci), band, more)
}

// ShortVerdict is Verdict's first words, for the headline table:
// "Unix faster: 19.4% lower p50", "no meaningful difference", ...
func ShortVerdict(s *results.Summary, c *results.Comparison) string {
	ci := c.SpeedupP50CI
	switch {
	case c.VerdictKind == results.NoResult, c.VerdictKind == results.TooFewInstances:
		return verdictWords[c.VerdictKind]
	case c.VerdictKind == results.FellBehind:
		return FellBehind(s)
	case ci == nil:
		return verdictWords[results.TooFewPairs]
	case c.VerdictKind == results.UnixFaster, c.VerdictKind == results.TCPFaster:
		lower, _, _ := LowerLatency(c.VerdictKind, ci)
		return fmt.Sprintf("%s: %.1f%% lower p50", verdictWords[c.VerdictKind], lower)
	}
	return verdictWords[c.VerdictKind]
}

// LowerLatency is how much lower, in percent, the faster transport's p50
// latency is than the other's, with the interval's bounds: for a speedup
// TCP/Unix of r, 1 − 1/r for Unix, 1 − r for TCP. It cannot be read
// backwards as "TCP/Unix − 1" can (a 1.41× speedup is 29% lower latency,
// not 41%).
func LowerLatency(kind results.VerdictKind, ci *results.Interval) (center, lo, hi float64) {
	if kind == results.TCPFaster {
		return 100 * (1 - ci.Center), 100 * (1 - ci.Hi), 100 * (1 - ci.Lo)
	}
	return 100 * (1 - 1/ci.Center), 100 * (1 - 1/ci.Lo), 100 * (1 - 1/ci.Hi)
}

func SpeedupCI(ci *results.Interval) string {
	return fmt.Sprintf("speedup %.3f× (95%% CI %.3f–%.3f)", ci.Center, ci.Lo, ci.Hi)
}

// Fill writes every comparison's verdict in words into r (the JSON's
// "verdict"), from its kind, and returns r; reports read before kinds
// existed keep their words. Package reports fills its own copy of what it
// renders, never the caller's report.
func Fill(r *results.Report) *results.Report {
	n := Comparisons(r)
	r.SetVerdicts(func(s *results.Summary, c *results.Comparison) string {
		if c.Path == results.Socket() && c.Baseline == results.DefaultBaseline() {
			return Verdict(s, c, n)
		}
		return PathVerdict(c)
	})
	return r
}

// Comparisons is how many comparisons Holm's adjustment is over: every
// path of every case against its baseline.
func Comparisons(r *results.Report) int { return r.ComparisonCount() }

// PathVerdict puts a path's verdict against its baseline in words, with
// its interval.
func PathVerdict(p *results.Comparison) string {
	ci := p.SpeedupP50CI
	base := p.Baseline
	if base == "" {
		base = results.DefaultBaseline()
	}
	switch p.VerdictKind {
	case results.NoResult:
		return "no result: every op failed on " + p.Path.Label() + " or " + base.Label()
	case results.TooFewInstances, results.TooFewPairs:
		return verdictWords[p.VerdictKind]
	case results.PathFaster, results.UnixFaster, results.TCPFaster, results.BaselineFaster:
		if ci == nil {
			return verdictWords[results.TooFewPairs]
		}
		faster, kind := p.Path.Label(), results.UnixFaster
		if p.VerdictKind == results.TCPFaster || p.VerdictKind == results.BaselineFaster {
			faster, kind = base.Label(), results.TCPFaster
		}
		lower, lo, hi := LowerLatency(kind, ci)
		return fmt.Sprintf("%s faster: %.1f%% lower p50 latency (95%% CI %.1f%%–%.1f%%; %s/%s %.3f×)", faster, lower, lo, hi, base.Label(), p.Path.Label(), ci.Center)
	}
	if ci == nil {
		return verdictWords[results.TooFewPairs]
	}
	return fmt.Sprintf("%s: %s", verdictWords[p.VerdictKind], SpeedupCI(ci))
}

// instancesForHolm says, for an interval over server instances, when the
// sign test over them cannot pass Holm's adjustment whatever they show
// (results.InstancesForHolm).
func instancesForHolm(ci *results.Interval, m int) string {
	if ci == nil || ci.Instances < results.MinInstances {
		return ""
	}
	need := results.InstancesForHolm(m)
	if ci.Instances >= need {
		return ""
	}
	return fmt.Sprintf(": over %d server instances the sign test's p-value cannot go below %.3g, so none of the %d comparisons can pass; measure %d or more server instances, or compare fewer cases and paths in one run",
		ci.Instances, 2/math.Pow(2, float64(ci.Instances)), m, need)
}

// ShortPathVerdict is PathVerdict's first words, for the table.
func ShortPathVerdict(p *results.Comparison) string {
	v := PathVerdict(p)
	if i := strings.Index(v, " latency ("); i > 0 && strings.Contains(v, " faster: ") {
		return v[:i]
	}
	if i := strings.Index(v, ": speedup"); i > 0 {
		return v[:i]
	}
	return v
}

// FellBehind says which path's generator fell behind at a case's rate,
// the rate it reached and its schedule lag, and that no path wins there:
// "the generator fell behind: 48,211 of 200,000 ops/s offered over TCP
// (p99 schedule lag 3.2 ms), 51,930 over Unix; no winner at this rate".
func FellBehind(s *results.Summary) string {
	var parts []string
	offered := 0.0
	for _, ps := range s.Sides {
		g := ps.Generator
		if g == nil {
			continue
		}
		offered = g.OfferedRate
		late := g.LateP99Ns
		if late == 0 {
			late = g.LagP99Ns // a file from before the lateness was kept
		}
		parts = append(parts, fmt.Sprintf("%s ops/s over %s (behind in %d of %d blocks; p99 of its own lateness up to %s)",
			Thousands(g.AchievedRate), ps.Path.Label(), g.BlocksBehind, g.Blocks, lagWords(late)))
	}
	return fmt.Sprintf("%s: it reached %s of %s ops/s offered; no winner at this rate (a block is behind under %.0f%% of the offered rate or with a p99 lateness over %s; a side, in more than %.0f%% of its blocks)",
		verdictWords[results.FellBehind], strings.Join(parts, ", "), Thousands(offered), 100*results.MinAchieved, results.LagBound, 100*results.MaxBehindShare)
}

// Thousands is x rounded, with commas between thousands: "48,211".
func Thousands(x float64) string {
	s := fmt.Sprintf("%.0f", math.Round(x))
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func lagWords(ns int64) string {
	d := time.Duration(ns)
	if d >= time.Millisecond {
		return fmt.Sprintf("%.1f ms", d.Seconds()*1e3)
	}
	return fmt.Sprintf("%.0f µs", d.Seconds()*1e6)
}
