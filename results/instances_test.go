package results

import (
	"math"
	"testing"
)

// The expected values were computed apart from this code, in Python: each
// instance's speedup as exp(median(log ratios)), the order k from the
// binomial sums (math.comb), the interval [x(k), x(n-k+1)], and the sign
// test's two-sided p-value.
func TestInstanceSpeedupMatchesHandComputed(t *testing.T) {
	inst := [][]float64{{1.20, 1.25, 1.22}, {1.30, 1.28, 1.33, 1.31}, {1.18, 1.19, 1.21}, nil, {1.27}, {1.24, 1.26},
		{1.15, 1.17, 1.16}, {1.29}, {1.21, 1.23}, {0.98, 1.5, 1.1}}
	ci, speedups, p := InstanceSpeedup(inst, 9)
	if ci == nil {
		t.Fatal("no interval from nine instances")
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.12f, want %.12f", what, got, want)
		}
	}
	near("center", ci.Center, 1.22)
	near("lo", ci.Lo, 1.16)
	near("hi", ci.Hi, 1.29)
	near("coverage", ci.Confidence, 0.9609375)
	near("p", p, 0.00390625)
	if ci.Instances != 9 || ci.Pairs != 22 || ci.Rounds != 9 || ci.Method != MethodInstances {
		t.Errorf("interval counts: %+v", ci)
	}
	want := []float64{1.22, 1.304990421420786, 1.19, 1.27, 1.2499599993599795, 1.16, 1.29, 1.219959015705036, 1.1}
	if len(speedups) != len(want) {
		t.Fatalf("%d instance speedups, want %d", len(speedups), len(want))
	}
	for i := range want {
		near("instance speedup", speedups[i], want[i])
	}
}

// One bad instance cannot move the estimate, and a bimodal spread of
// instances widens the interval instead of being averaged away.
func TestInstanceSpeedupIsRobust(t *testing.T) {
	one := func(r float64) []float64 { return []float64{r} }
	ci, _, _ := InstanceSpeedup([][]float64{one(1.50), one(1.51), one(1.44), one(1.52), one(1.45), one(1.50), one(9)}, 7)
	if ci == nil || math.Abs(ci.Center-1.50) > 1e-9 || math.Abs(ci.Hi-9) > 1e-9 || math.Abs(ci.Lo-1.44) > 1e-9 {
		t.Errorf("seven instances, one wild: %+v, want center 1.50 in [1.44, 9] (n=7 gives the extremes)", ci)
	}
}

func TestInstanceSpeedupNeedsSixInstances(t *testing.T) {
	five := [][]float64{{1.1}, {1.2}, {1.3}, {1.2}, {1.1}}
	if ci, speedups, p := InstanceSpeedup(five, 5); ci != nil || len(speedups) != 5 || math.Abs(p-0.0625) > 1e-12 {
		t.Errorf("five instances gave %+v, %v, p %v: want no interval (its extremes cover only 93.75%%), the speedups and p 1/16", ci, speedups, p)
	}
	if ci, _, _ := InstanceSpeedup([][]float64{{1.1}, {0}, {1}, {1}, {1}, {1}}, 6); ci != nil {
		t.Errorf("a ratio of 0 gave an interval %+v", ci)
	}
}
