package results

import (
	"encoding/json"
	"math"
	"sort"
	"testing"
)

// stackRuns are one stack's runs on nine server instances: instance i's
// block pairs have TCP/Unix ratios base*(1+0.01*i) spread by ±2%.
func stackRuns(t *testing.T, stack string, base float64) []Run {
	t.Helper()
	var out []Run
	for in := 1; in <= 9; in++ {
		r := base * (1 + 0.013*float64((in*7)%9-4))
		rs := []float64{r * 0.98, r, r * 1.02, r * 1.01, r * 0.99, r * 1.005, r * 0.995}
		for _, run := range blockRuns(t, "redis", 1, ratios(rs...)...) {
			run.Instance, run.Stack, run.Mode = in, stack, "resp2"
			if stack == "" {
				run.Mode = "resp3" // go-redis's: each library speaks its own
			}
			out = append(out, run)
		}
	}
	return out
}

// TestStackComparisonsMatchPerInstanceSpeedups checks the JSON's stack
// comparisons against each instance's speedups computed here from the
// blocks themselves: each stack's speedup on an instance is the median of
// its blocks' TCP/Unix p50 ratios (seven pairs: the middle one), the
// instance's ratio is PHP's over Go's, the comparison is the median of the
// nine ratios with the order-statistics interval [x(2), x(8)] (for n = 9,
// P(B <= 1) = 10/512 <= 0.025 < P(B <= 2)), coverage 1 - 2*10/512, and the
// sign test's p over the nine.
func TestStackComparisonsMatchPerInstanceSpeedups(t *testing.T) {
	r := &Report{}
	r.Runs = append(r.Runs, stackRuns(t, "", 1.36)...)
	r.Runs = append(r.Runs, stackRuns(t, "php", 1.61)...)
	r.Runs = append(r.Runs, stackRuns(t, "python", 1.36)...)
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Stacks []struct {
			Stack, Reference, Path string
			Ratio                  float64
			RatioCI                *struct{ Center, Lo, Hi, Confidence float64 } `json:"ratio_ci"`
			InstanceRatios         []float64                                     `json:"instance_ratios"`
			PValue                 float64                                       `json:"p_value"`
			PValueHolm             float64                                       `json:"p_value_holm"`
			Speedup                float64                                       `json:"speedup_p50"`
			VerdictKind            string                                        `json:"verdict_kind"`
		} `json:"stacks"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Stacks) != 2 {
		t.Fatalf("%d stack comparisons, want 2 (php and python against go)", len(back.Stacks))
	}
	perInstance := func(stack string) []float64 { // by hand from the blocks
		var out []float64
		for in := 1; in <= 9; in++ {
			var rs []float64
			for _, run := range r.Runs {
				if run.Stack != stack || run.Instance != in || run.Transport != "tcp" {
					continue
				}
				for _, u := range r.Runs {
					if u.Stack == stack && u.Instance == in && u.Transport == "unix" {
						for j := range run.Blocks {
							rs = append(rs, float64(run.Blocks[j].P50)/float64(u.Blocks[j].P50))
						}
					}
				}
			}
			sort.Float64s(rs)
			out = append(out, rs[len(rs)/2])
		}
		return out
	}
	goSpeed := perInstance("")
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.12f, want %.12f", what, got, want)
		}
	}
	var ps []float64
	for k, stack := range []string{"php", "python"} {
		sc := back.Stacks[k]
		if sc.Stack != stack || sc.Reference != "" || sc.Path != "unix" {
			t.Fatalf("comparison %d: %s against %q over %s, want %s against go over unix", k, sc.Stack, sc.Reference, sc.Path, stack)
		}
		mine := perInstance(stack)
		var rat []float64
		pos, neg := 0, 0 // the sign test drops ties
		for i := range mine {
			rat = append(rat, mine[i]/goSpeed[i])
			near("instance ratio", sc.InstanceRatios[i], rat[i])
			switch {
			case rat[i] > 1:
				pos++
			case rat[i] < 1:
				neg++
			}
		}
		sorted := append([]float64(nil), rat...)
		sort.Float64s(sorted)
		if sc.RatioCI == nil {
			t.Fatalf("%s: no interval over nine instances", stack)
		}
		near(stack+" ratio", sc.Ratio, sorted[4])
		near(stack+" lo", sc.RatioCI.Lo, sorted[1])
		near(stack+" hi", sc.RatioCI.Hi, sorted[7])
		near(stack+" coverage", sc.RatioCI.Confidence, 1-2*10.0/512)
		sm := append([]float64(nil), mine...)
		sort.Float64s(sm)
		near(stack+" speedup", sc.Speedup, sm[4])
		tail := 0.5 // two-sided sign test: 2 P(B <= min(pos, neg)), B ~ Bin(pos+neg, 1/2)
		if n := pos + neg; n > 0 {
			tail = 0
			for j := 0; j <= min(pos, neg); j++ {
				tail += float64(binom(n, j)) / math.Pow(2, float64(n))
			}
		}
		near(stack+" p", sc.PValue, math.Min(1, 2*tail))
		ps = append(ps, math.Min(1, 2*tail))
	}
	// Holm over the two: the smaller p times 2, the larger times 1, kept monotone.
	lo, hi := math.Min(ps[0], ps[1]), math.Max(ps[0], ps[1])
	holm := map[float64]float64{lo: math.Min(1, 2*lo)}
	holm[hi] = math.Max(holm[lo], hi)
	for k := range ps {
		near("holm", back.Stacks[k].PValueHolm, holm[ps[k]])
	}
	if back.Stacks[0].VerdictKind != string(UnixFaster) || back.Stacks[0].RatioCI.Lo <= 1 {
		t.Errorf("php gains 18%% more than go on every instance: verdict %q, interval %+v", back.Stacks[0].VerdictKind, back.Stacks[0].RatioCI)
	}
	if v := back.Stacks[1].VerdictKind; v != string(NoDifference) {
		t.Errorf("python gains as much as go: verdict %q, want %q", v, NoDifference)
	}
}

func binom(n, k int) int {
	c := 1
	for i := 0; i < k; i++ {
		c = c * (n - i) / (i + 1)
	}
	return c
}

// TestNoStackComparisonFromOneStack: a run of one stack compares none.
func TestNoStackComparisonFromOneStack(t *testing.T) {
	r := &Report{Runs: stackRuns(t, "php", 1.5)}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	if len(r.Stacks) != 0 {
		t.Errorf("one stack gave %d stack comparisons", len(r.Stacks))
	}
}

// TestStackRatioThreshold: a threshold names a stack comparison's ratio or
// its interval's bound, and fails, saying why, where there is none.
func TestStackRatioThreshold(t *testing.T) {
	r := &Report{}
	r.Runs = append(stackRuns(t, "", 1.36), stackRuns(t, "php", 1.61)...)
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	sc := r.Stacks[0]
	for _, c := range []struct {
		expr string
		ok   bool
		want float64
	}{
		{"redis@php.unix.stack_ratio>1.1", true, sc.Ratio},
		{"redis@php.unix.stack_ratio.lo>1.1", true, sc.RatioCI.Lo},
		{"redis@php.unix.stack_ratio.hi<1.1", false, sc.RatioCI.Hi},
		{"redis.unix.stack_ratio>=1", true, sc.Ratio},
	} {
		th, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		res := Evaluate(r, []Threshold{th})
		if len(res) != 1 || res[0].OK != c.ok || res[0].Actual == nil || *res[0].Actual != c.want {
			t.Errorf("%s: %+v, want ok %v at %v", c.expr, res, c.ok, c.want)
		}
	}
	th, _ := Parse("redis@python.unix.stack_ratio>1")
	if res := Evaluate(r, []Threshold{th}); len(res) != 1 || res[0].OK || res[0].ActualText == "" {
		t.Errorf("a stack not measured: %+v, want a failure that says why", res)
	}
	if _, err := Parse("redis@php.unix.stack_ratio.mid>1"); err == nil {
		t.Error("stack_ratio.mid parsed")
	}
}
