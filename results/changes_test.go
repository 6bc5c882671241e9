package results

import (
	"math"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// exactMannWhitney is the two-sided exact p-value of the Mann-Whitney U
// test of a against b (no ties), by enumerating every way to split the
// pooled values into groups of len(a) and len(b) (Mann and Whitney,
// 1947): twice the share of splits whose U is at most the observed
// smaller U, capped at 1. Independent of benchmath.
func exactMannWhitney(a, b []float64) float64 {
	u := func(x, y []float64) float64 {
		n := 0.0
		for _, xi := range x {
			for _, yi := range y {
				if xi < yi {
					n++
				}
			}
		}
		return n
	}
	obs := math.Min(u(a, b), u(b, a))
	pooled := append(append([]float64{}, a...), b...)
	n, k := len(pooled), len(a)
	var total, extreme float64
	for mask := 0; mask < 1<<n; mask++ {
		var x, y []float64
		for i := range n {
			if mask&(1<<i) != 0 {
				x = append(x, pooled[i])
			} else {
				y = append(y, pooled[i])
			}
		}
		if len(x) != k {
			continue
		}
		total++
		if u(x, y) <= obs {
			extreme++
		}
	}
	return math.Min(1, 2*extreme/total)
}

// changeReport is a report of one case whose TCP side ran blocks with
// the given p50s.
func changeReport(p50s []float64) *Report {
	c := Case{Scenario: "pk"}
	run := Run{Case: c, Transport: drivers.TCP}
	for i, v := range p50s {
		run.Blocks = append(run.Blocks, Block{Pair: i, N: 10, P50: int64(v), Mean: v, P99: int64(v)})
	}
	return &Report{Runs: []Run{run}, Summary: []Summary{{Case: c, Sides: []PathSide{{Path: drivers.TCP, Side: Side{Latency: Latency{P50: int64(p50s[0]), Mean: p50s[0]}}}}}}}
}

// TestChangesMannWhitneyExact: dbsock compare's p-value of a change is
// the Mann-Whitney U test's, checked against the exact distribution
// enumerated here, and a change is significant below Alpha.
func TestChangesMannWhitneyExact(t *testing.T) {
	for _, tc := range []struct{ old, new []float64 }{
		{[]float64{100, 101, 102, 103, 104, 105}, []float64{110, 111, 112, 113, 114, 115}},
		{[]float64{100, 104, 108, 112, 116, 120}, []float64{102, 106, 111, 115, 121, 125}},
		{[]float64{100, 130, 105, 125, 110, 120}, []float64{101, 129, 106, 124, 111, 119}},
	} {
		var p50 *Change
		for _, c := range Changes(changeReport(tc.old), changeReport(tc.new)) {
			if c.Metric == "p50" {
				p50 = &c
			}
		}
		if p50 == nil {
			t.Fatal("no p50 change")
		}
		want := exactMannWhitney(tc.old, tc.new)
		if math.Abs(p50.P-want) > 1e-9 {
			t.Errorf("%v -> %v: p = %.6f, the exact Mann-Whitney U test gives %.6f", tc.old, tc.new, p50.P, want)
		}
		if p50.Significant != (want < Alpha) {
			t.Errorf("%v -> %v: significant %v at p %.4f", tc.old, tc.new, p50.Significant, want)
		}
	}
}
