package reports

import (
	"fmt"
	"math"

	"github.com/dbsock/dbsock/results"
)

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
	case results.UnixFaster:
		return fmt.Sprintf("%s by %.1f%% (95%% CI %.1f%%–%.1f%%)", words, 100*(ci.Center-1), 100*(ci.Lo-1), 100*(ci.Hi-1))
	case results.TCPFaster:
		return fmt.Sprintf("%s by %.1f%% (95%% CI %.1f%%–%.1f%%)", words, 100*(1/ci.Center-1), 100*(1/ci.Hi-1), 100*(1/ci.Lo-1))
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
// "Unix faster by 24.0%", "no meaningful difference", ...
func ShortVerdict(s *results.Summary) string {
	ci := s.UnixSpeedupP50CI
	switch {
	case s.VerdictKind == results.NoResult, s.VerdictKind == results.TooFewInstances:
		return verdictWords[s.VerdictKind]
	case ci == nil:
		return verdictWords[results.TooFewPairs]
	case s.VerdictKind == results.UnixFaster:
		return fmt.Sprintf("%s by %.1f%%", verdictWords[s.VerdictKind], 100*(ci.Center-1))
	case s.VerdictKind == results.TCPFaster:
		return fmt.Sprintf("%s by %.1f%%", verdictWords[s.VerdictKind], 100*(1/ci.Center-1))
	}
	return verdictWords[s.VerdictKind]
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
			s.Verdict = Verdict(s, len(r.Summary))
		}
	}
	return r
}
