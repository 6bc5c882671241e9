package words

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// TestVerdictWords: every kind gets its words and the interval as a
// percentage, and the headline's short form is its first words.
// TestHolmNeedsInstances: over k server instances the sign test's p-value
// is at least 2/2^k, so with m comparisons no case can pass Holm's
// adjustment unless 2^k reaches 2m/0.05; the verdict says how many
// server instances would let it (9 instances: up to 12 comparisons; 15 need
// 10 instances, 2^10 = 1024 >= 600).
func TestHolmNeedsInstances(t *testing.T) {
	over := func(k int) *results.Interval {
		return &results.Interval{Center: 1.5, Lo: 1.4, Hi: 1.6, Instances: k}
	}
	for _, c := range []struct {
		k, m int
		want string
	}{
		{9, 12, ""}, {9, 13, "measure 10 or more server instances"}, {9, 15, "measure 10 or more server instances"}, {10, 25, ""}, {10, 26, "measure 11 or more server instances"}, {3, 40, ""},
	} {
		got := instancesForHolm(over(c.k), c.m)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%d instances, %d comparisons: %q, want %q", c.k, c.m, got, c.want)
		}
	}
	c := results.Comparison{VerdictKind: results.NotSignificant, SpeedupP50CI: over(9), PValueHolm: 0.059}
	if v := Verdict(&results.Summary{}, &c, 15); !strings.Contains(v, "cannot go below 0.00391, so none of the 15 comparisons can pass; measure 10 or more server instances") {
		t.Errorf("verdict %q", v)
	}
}

func TestVerdictWords(t *testing.T) {
	unix := &results.Interval{Center: 1.3, Lo: 1.25, Hi: 1.35, Pairs: 30}
	tcp := &results.Interval{Center: 0.8, Lo: 0.78, Hi: 0.82, Pairs: 30}
	flat := &results.Interval{Center: 1.004, Lo: 0.995, Hi: 1.01, Pairs: 30}
	wide := &results.Interval{Center: 1.02, Lo: 0.9, Hi: 1.15, Pairs: 10}
	tests := []struct {
		name        string
		c           results.Comparison
		long, short string
	}{
		{"unix", results.Comparison{VerdictKind: results.UnixFaster, SpeedupP50CI: unix}, "Unix faster: 23.1% lower p50 latency (95% CI 20.0%–25.9%; TCP/Unix 1.300×)", "Unix faster: 23.1% lower p50"},
		{"tcp", results.Comparison{VerdictKind: results.TCPFaster, SpeedupP50CI: tcp}, "TCP faster: 20.0% lower p50 latency (95% CI 18.0%–22.0%; TCP/Unix 0.800×)", "TCP faster: 20.0% lower p50"},
		{"band", results.Comparison{VerdictKind: results.NoDifference, SpeedupP50CI: flat}, "no meaningful difference: speedup 1.004× (95% CI 0.995–1.010), within the ±2% band", "no meaningful difference"},
		{"wide", results.Comparison{VerdictKind: results.Undecided, SpeedupP50CI: wide}, "undecided: run longer: speedup 1.020× (95% CI 0.900–1.150) straddles 1", "undecided: run longer"},
		{"holm", results.Comparison{VerdictKind: results.NotSignificant, SpeedupP50CI: unix, PValueHolm: 0.08}, "undecided after Holm's adjustment: speedup 1.300× (95% CI 1.250–1.350), but not significant after Holm's adjustment for 2 comparisons (p = 0.08)", "undecided after Holm's adjustment"},
		{"few", results.Comparison{VerdictKind: results.TooFewPairs}, "not enough block pairs for an interval", "not enough block pairs for an interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Verdict(&results.Summary{}, &tt.c, 2); !strings.HasPrefix(got, tt.long) {
				t.Errorf("Verdict = %q, want it to start with %q", got, tt.long)
			}
			if got := ShortVerdict(&results.Summary{}, &tt.c); got != tt.short {
				t.Errorf("ShortVerdict = %q, want %q", got, tt.short)
			}
		})
	}
}

// TestPathVerdictWords: a further path's verdict names the path, or TCP,
// as the faster one, with the interval as a percentage.
func TestPathVerdictWords(t *testing.T) {
	faster := results.Comparison{Path: "tcp6", VerdictKind: results.PathFaster, SpeedupP50CI: &results.Interval{Center: 1.05, Lo: 1.02, Hi: 1.08}}
	slower := results.Comparison{Path: "tcp6", VerdictKind: results.TCPFaster, SpeedupP50CI: &results.Interval{Center: 0.9, Lo: 0.88, Hi: 0.92}}
	flat := results.Comparison{Path: "tcp6", VerdictKind: results.NoDifference, SpeedupP50CI: &results.Interval{Center: 1.0, Lo: 0.99, Hi: 1.01}}
	for _, tt := range []struct {
		p           results.Comparison
		long, short string
	}{
		{faster, "TCP6 faster: 4.8% lower p50 latency (95% CI 2.0%–7.4%; TCP/TCP6 1.050×)", "TCP6 faster: 4.8% lower p50"},
		{slower, "TCP faster: 10.0% lower p50 latency (95% CI 8.0%–12.0%; TCP/TCP6 0.900×)", "TCP faster: 10.0% lower p50"},
		{flat, "no meaningful difference: speedup 1.000× (95% CI 0.990–1.010)", "no meaningful difference"},
	} {
		if got := PathVerdict(&tt.p); got != tt.long {
			t.Errorf("PathVerdict = %q, want %q", got, tt.long)
		}
		if got := ShortPathVerdict(&tt.p); got != tt.short {
			t.Errorf("ShortPathVerdict = %q, want %q", got, tt.short)
		}
	}
}

// TestUndecidedSaysWhatToMeasure: an undecided verdict says what more to
// measure in the run's own terms (server instances, rounds or blocks, a
// precision goal), never a flag of the command line: a library user and a
// report's reader have none.
func TestUndecidedSaysWhatToMeasure(t *testing.T) {
	for _, tt := range []struct {
		instances int
		want      string
	}{
		{5, "server instances (more server instances) would likely settle it"},
		{1, "block pairs (more rounds or blocks, or a tighter precision goal) would likely settle it"},
	} {
		ci := &results.Interval{Center: 1.01, Lo: 0.99, Hi: 1.03, Pairs: 40, Instances: tt.instances}
		c := results.Comparison{VerdictKind: results.Undecided, SpeedupP50CI: ci}
		got := Verdict(&results.Summary{}, &c, 1)
		if !strings.Contains(got, tt.want) || strings.Contains(got, "--") {
			t.Errorf("%d instances: verdict %q, want it to say %q and name no flag", tt.instances, got, tt.want)
		}
	}
}
