package results

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// refStats is testdata/stats.json: values computed by testdata/stats.py with
// Python's standard library (exact binomial sums), not by this package.
type refStats struct {
	Median []struct {
		Xs     []float64 `json:"xs"`
		Median float64   `json:"median"`
		CI     *struct {
			Lo, Hi, Coverage float64
		} `json:"ci"`
		SignP   float64   `json:"sign_p"`
		RobustZ []float64 `json:"robust_z"`
	} `json:"median"`
	Holm []struct {
		P        []float64 `json:"p"`
		Adjusted []float64 `json:"adjusted"`
	} `json:"holm"`
}

func loadRef(t *testing.T) refStats {
	t.Helper()
	b, err := os.ReadFile("testdata/stats.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref refStats
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Median) < 10 || len(ref.Holm) < 3 {
		t.Fatalf("testdata/stats.json holds %d samples and %d Holm cases; regenerate it with stats.py", len(ref.Median), len(ref.Holm))
	}
	return ref
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMedianCIAgainstReference(t *testing.T) {
	for _, c := range loadRef(t).Median {
		med, lo, hi, cov, ok := MedianCI(c.Xs, Confidence)
		if !near(med, c.Median) {
			t.Errorf("n=%d: median %v, want %v", len(c.Xs), med, c.Median)
		}
		if ok != (c.CI != nil) {
			t.Errorf("n=%d: interval given %v, want %v", len(c.Xs), ok, c.CI != nil)
			continue
		}
		if ok && (!near(lo, c.CI.Lo) || !near(hi, c.CI.Hi) || !near(cov, c.CI.Coverage)) {
			t.Errorf("n=%d: CI %v–%v (coverage %v), want %v–%v (%v)", len(c.Xs), lo, hi, cov, c.CI.Lo, c.CI.Hi, c.CI.Coverage)
		}
		if ok && cov < Confidence {
			t.Errorf("n=%d: coverage %v below %v", len(c.Xs), cov, Confidence)
		}
	}
}

func TestSignTestAgainstReference(t *testing.T) {
	for _, c := range loadRef(t).Median {
		if p := SignTest(c.Xs); !near(p, c.SignP) {
			t.Errorf("n=%d: sign test p %v, want %v", len(c.Xs), p, c.SignP)
		}
	}
}

func TestRobustZAgainstReference(t *testing.T) {
	for _, c := range loadRef(t).Median {
		z := RobustZ(c.Xs)
		for i := range z {
			if !near(z[i], c.RobustZ[i]) {
				t.Errorf("n=%d: z[%d] = %v, want %v", len(c.Xs), i, z[i], c.RobustZ[i])
			}
		}
	}
}

func TestHolmAgainstReference(t *testing.T) {
	for _, c := range loadRef(t).Holm {
		got := Holm(c.P)
		for i := range got {
			if !near(got[i], c.Adjusted[i]) {
				t.Errorf("Holm(%v) = %v, want %v", c.P, got, c.Adjusted)
				break
			}
		}
	}
}

// blockRuns builds one round's TCP and Unix runs from block pairs of p50s
// (each block's mean equals its p50).
func blockRuns(t *testing.T, target string, round int, pairs ...[2]int64) []Run {
	t.Helper()
	var out []Run
	for _, tr := range drivers.Transports {
		r := run(t, target, tr, round, 1000)
		for j, p := range pairs {
			v := p[0]
			if tr == drivers.Unix {
				v = p[1]
			}
			r.Blocks = append(r.Blocks, Block{Pair: j, Index: 2 * j, StartNs: int64(j) * 1e6, N: 100, P50: v, Mean: float64(v), P99: 2 * v})
		}
		out = append(out, r)
	}
	return out
}

// ratios makes block pairs whose TCP/Unix ratios are rs (Unix at 10 µs).
func ratios(rs ...float64) [][2]int64 {
	var out [][2]int64
	for _, r := range rs {
		out = append(out, [2]int64{int64(math.Round(10000 * r)), 10000})
	}
	return out
}

func repeat(r float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func summarize(t *testing.T, runs ...[]Run) *Report {
	t.Helper()
	r := &Report{}
	for _, rs := range runs {
		r.Runs = append(r.Runs, rs...)
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVerdicts(t *testing.T) {
	wobble := func(center float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = center * (1 + 0.01*float64(i%5-2))
		}
		return out
	}
	tests := []struct {
		name   string
		ratios []float64
		want   VerdictKind
	}{
		{"unix clearly faster", wobble(1.3, 30), UnixFaster},
		{"tcp clearly faster", wobble(0.8, 30), TCPFaster},
		{"inside the band", wobble(1.004, 30), NoDifference},
		{"wide around one", []float64{0.8, 1.25, 0.9, 1.1, 0.85, 1.2, 0.95, 1.05, 1.15, 0.88}, Undecided},
		{"too few pairs", []float64{1.3, 1.3, 1.3}, TooFewPairs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(t, blockRuns(t, "x", 1, ratios(tt.ratios...)...)).Summary[0]
			if s.Against(drivers.Unix).VerdictKind != tt.want {
				t.Fatalf("verdict %q, want %q (ci %+v)", s.Against(drivers.Unix).VerdictKind, tt.want, s.Against(drivers.Unix).SpeedupP50CI)
			}
			if ci := s.Against(drivers.Unix).SpeedupP50CI; ci != nil && (ci.Lo > ci.Center || ci.Hi < ci.Center || ci.Pairs != len(tt.ratios)) {
				t.Fatalf("interval %+v does not contain its center or miscounts pairs", ci)
			}
		})
	}
}

func TestUndecidedSaysHowMuchMore(t *testing.T) {
	s := summarize(t, blockRuns(t, "x", 1, ratios(0.97, 1.08, 0.99, 1.06, 1.01, 1.07, 0.98, 1.05, 1.03, 1.04)...)).Summary[0]
	if n := MoreBlockPairs(s.Against(drivers.Unix).SpeedupP50CI); s.Against(drivers.Unix).VerdictKind != Undecided || n < 2 || n > 100 {
		t.Fatalf("verdict %q, %v× more block pairs; want undecided with how many more pairs", s.Against(drivers.Unix).VerdictKind, n)
	}
}

func TestOneBadBlockCannotMoveTheSpeedup(t *testing.T) {
	calm := repeat(1.3, 30)
	bad := append(repeat(1.3, 29), 9.0)
	a := summarize(t, blockRuns(t, "x", 1, ratios(calm...)...)).Summary[0]
	b := summarize(t, blockRuns(t, "x", 1, ratios(bad...)...)).Summary[0]
	if !near(a.Against(drivers.Unix).SpeedupP50, b.Against(drivers.Unix).SpeedupP50) || !near(a.Against(drivers.Unix).SpeedupP50CI.Lo, b.Against(drivers.Unix).SpeedupP50CI.Lo) {
		t.Fatalf("one wild pair moved the speedup: %v (%+v) vs %v (%+v)", a.Against(drivers.Unix).SpeedupP50, a.Against(drivers.Unix).SpeedupP50CI, b.Against(drivers.Unix).SpeedupP50, b.Against(drivers.Unix).SpeedupP50CI)
	}
}

func TestPairsSpanRounds(t *testing.T) {
	r := summarize(t, blockRuns(t, "x", 1, ratios(repeat(1.2, 10)...)...), blockRuns(t, "x", 2, ratios(repeat(1.2, 10)...)...))
	ci := r.Summary[0].Against(drivers.Unix).SpeedupP50CI
	if ci == nil || ci.Pairs != 20 || ci.Rounds != 2 {
		t.Fatalf("interval %+v, want 20 pairs over 2 rounds", ci)
	}
}

func TestHolmAdjustsASweep(t *testing.T) {
	// 15 of 20 pairs favour Unix: sign test p = 0.041, significant alone,
	// not once two such cases share the 5%.
	lopsided := append(repeat(1.1, 15), repeat(0.95, 5)...)
	alone := summarize(t, blockRuns(t, "a", 1, ratios(lopsided...)...)).Summary[0]
	if alone.Against(drivers.Unix).VerdictKind != UnixFaster || !near(alone.Against(drivers.Unix).PValue, alone.Against(drivers.Unix).PValueHolm) {
		t.Fatalf("alone: verdict %q, p %v, Holm %v; want Unix faster, unadjusted", alone.Against(drivers.Unix).VerdictKind, alone.Against(drivers.Unix).PValue, alone.Against(drivers.Unix).PValueHolm)
	}
	sweep := summarize(t, blockRuns(t, "a", 1, ratios(lopsided...)...), blockRuns(t, "b", 1, ratios(lopsided...)...))
	for _, s := range sweep.Summary {
		if s.Against(drivers.Unix).VerdictKind != NotSignificant || !near(s.Against(drivers.Unix).PValueHolm, 2*s.Against(drivers.Unix).PValue) {
			t.Fatalf("%s: verdict %q, p %v, Holm %v; want not significant after Holm", s.Target, s.Against(drivers.Unix).VerdictKind, s.Against(drivers.Unix).PValue, s.Against(drivers.Unix).PValueHolm)
		}
	}
}

func TestNoisyBlocksFlaggedAndWarned(t *testing.T) {
	pairs := ratios(repeat(1.3, 30)...)
	for j := range pairs { // real blocks wobble a little
		pairs[j][1] += int64(100 * (j%5 - 2))
	}
	for _, j := range []int{3, 4, 5, 6} { // a noise episode: four Unix blocks 60% slower
		pairs[j][1] = 16000
	}
	r := summarize(t, blockRuns(t, "x", 1, pairs...))
	s := r.Summary[0]
	if s.Blocks != 60 || len(s.NoisyBlocks) != 4 {
		t.Fatalf("blocks %d, noisy %d (%+v); want 60 and 4", s.Blocks, len(s.NoisyBlocks), s.NoisyBlocks)
	}
	for _, nb := range s.NoisyBlocks {
		if nb.Transport != drivers.Unix || nb.P50 != 16000 {
			t.Fatalf("flagged %+v, want only the slow Unix blocks", nb)
		}
	}
	flagged := 0
	for _, run := range r.Runs {
		for _, b := range run.Blocks {
			if b.Noisy {
				flagged++
			}
		}
	}
	if flagged != 4 {
		t.Fatalf("%d blocks marked noisy in the runs, want 4", flagged)
	}
	if len(s.Warnings) != 0 {
		t.Fatalf("4 of 60 noisy blocks (under 10%%) must not warn: %q", s.Warnings)
	}
	for _, j := range []int{10, 11, 12, 13} { // a second episode: 8 of 60 now
		pairs[j][1] = 16000
	}
	s = summarize(t, blockRuns(t, "x", 1, pairs...)).Summary[0]
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].String(), "machine was noisy: 8 of 60 blocks") || !strings.Contains(s.Warnings[0].String(), "3ms and 13ms") {
		t.Fatalf("warnings %q, want the noisy machine and when", s.Warnings)
	}
}

func TestRunsWithoutBlocksCountAsOneBlockEach(t *testing.T) {
	var runs []Run
	for rd := 1; rd <= 7; rd++ {
		runs = append(runs, run(t, "x", drivers.TCP, rd, 12000), run(t, "x", drivers.Unix, rd, 10000))
	}
	s := summarize(t, runs).Summary[0]
	if ci := s.Against(drivers.Unix).SpeedupP50CI; ci == nil || ci.Pairs != 7 || s.Against(drivers.Unix).VerdictKind != UnixFaster {
		t.Fatalf("old-style report: interval %+v, verdict %q; want 7 pairs, Unix faster", s.Against(drivers.Unix).SpeedupP50CI, s.Against(drivers.Unix).VerdictKind)
	}
}

// TestAThirdPathLeavesTheFirstTwoAsTheyWere: a tcp6 path beside TCP and
// Unix is compared with TCP by the same paired method (its speedup is the
// median of TCP/TCP6 over the groups, with MedianCI's interval of the log
// ratios), and
// adds nothing to Unix's figures but one more comparison to Holm's
// adjustment.
func TestAThirdPathLeavesTheFirstTwoAsTheyWere(t *testing.T) {
	rs := []float64{1.4, 1.5, 1.6, 1.45, 1.55, 1.5, 1.52, 1.48, 1.51, 1.49, 1.5, 1.47}
	two := &Report{Runs: blockRuns(t, "redis", 1, ratios(rs...)...)}
	three := &Report{Runs: blockRuns(t, "redis", 1, ratios(rs...)...)}
	// TCP6 at TCP's p50 divided by 1.1 (10% faster), 0.9 in two groups.
	third := run(t, "redis", drivers.Transport("tcp6"), 1, 1000)
	var want []float64
	for j, b := range three.Runs[0].Blocks {
		f := 1.1
		if j%6 == 0 {
			f = 0.9
		}
		v := int64(math.Round(float64(b.P50) / f))
		third.Blocks = append(third.Blocks, Block{Pair: j, Index: 3*j + 2, N: 100, P50: v, Mean: float64(v), P99: 2 * v})
		want = append(want, math.Log(float64(b.P50)/float64(v))) // the interval is over log ratios
	}
	three.Runs = append(three.Runs, third)
	for _, r := range []*Report{two, three} {
		if err := r.Summarize(); err != nil {
			t.Fatal(err)
		}
	}
	a, b := two.Summary[0], three.Summary[0]
	if a.Against(drivers.Unix).SpeedupP50 != b.Against(drivers.Unix).SpeedupP50 || *a.Against(drivers.Unix).SpeedupP50CI != *b.Against(drivers.Unix).SpeedupP50CI || a.Against(drivers.Unix).PValue != b.Against(drivers.Unix).PValue || a.Side(drivers.TCP).Latency != b.Side(drivers.TCP).Latency || a.Side(drivers.Unix).N != b.Side(drivers.Unix).N {
		t.Errorf("a third path changed Unix's comparison: %+v vs %+v", a.Against(drivers.Unix).SpeedupP50CI, b.Against(drivers.Unix).SpeedupP50CI)
	}
	if len(a.Comparisons) != 1 || len(b.Comparisons) != 2 {
		t.Fatalf("comparisons: %d and %d, want 1 and 2", len(a.Comparisons), len(b.Comparisons))
	}
	p := b.Comparisons[1]
	side := b.Side(p.Path)
	med, lo, hi, _, ok := MedianCI(want, 0.95)
	med, lo, hi = math.Exp(med), math.Exp(lo), math.Exp(hi)
	if !ok || p.Path != "tcp6" || p.Baseline != drivers.TCP || p.SpeedupP50CI == nil ||
		math.Abs(p.SpeedupP50-med) > 1e-9 || math.Abs(p.SpeedupP50CI.Lo-lo) > 1e-9 || math.Abs(p.SpeedupP50CI.Hi-hi) > 1e-9 {
		t.Fatalf("tcp6: %+v (interval %+v), want median %.4f in [%.4f, %.4f]", p, p.SpeedupP50CI, med, lo, hi)
	}
	if side.N != 1 || p.VerdictKind == "" {
		t.Errorf("tcp6 side %+v, verdict %q", side, p.VerdictKind)
	}
	// What the socket gains over tcp6: tcp6's p50 over Unix's, group by
	// group, by the same interval.
	unix := three.Runs[1]
	if unix.Transport != drivers.Unix {
		t.Fatalf("run 1 is %s, want unix", unix.Transport)
	}
	var gains []float64
	for j, b := range third.Blocks {
		gains = append(gains, math.Log(float64(b.P50)/float64(unix.Blocks[j].P50)))
	}
	gmed, glo, ghi, _, ok := MedianCI(gains, 0.95)
	gmed, glo, ghi = math.Exp(gmed), math.Exp(glo), math.Exp(ghi)
	if !ok || p.UnixGainP50CI == nil || math.Abs(p.UnixGainP50-gmed) > 1e-9 || math.Abs(p.UnixGainP50CI.Lo-glo) > 1e-9 || math.Abs(p.UnixGainP50CI.Hi-ghi) > 1e-9 {
		t.Fatalf("unix gain over tcp6: %.4f %+v, want median %.4f in [%.4f, %.4f]", p.UnixGainP50, p.UnixGainP50CI, gmed, glo, ghi)
	}
	// Holm over two comparisons: the smaller p-value doubled, at least.
	if pmin := math.Min(b.Against(drivers.Unix).PValue, p.PValue); math.Min(b.Against(drivers.Unix).PValueHolm, p.PValueHolm) < math.Min(2*pmin, 1)-1e-12 {
		t.Errorf("Holm: p %v and %v adjusted to %v and %v", b.Against(drivers.Unix).PValue, p.PValue, b.Against(drivers.Unix).PValueHolm, p.PValueHolm)
	}
}
