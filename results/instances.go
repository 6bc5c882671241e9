package results

import "math"

// Server instances, the level above rounds. A server restarted between
// measurements (and the fresh connections to it) can settle differently
// each time: here, which of two typical latencies a set of connections
// gets, or where a server's threads and buffers land. Block pairs within
// one instance share that draw, so they are not independent of each other
// the way pairs from different instances are. Following Kalibera and Jones
// ("Rigorous Benchmarking in Reasonable Time", ISMM 2013), each instance is
// summarised first, by the median of its paired ratios, and the interval
// is computed over the instances only, never by pooling pairs across
// them. Over instances dbsock uses the same distribution-free method as
// within one (Conover 1999, section 3.2: the median and the order
// statistics' interval, with the sign test): it assumes no distribution of
// the instance speedups, which are often bimodal here, where a t interval
// over a few instances is too narrow whenever they all land in one mode.

// MinInstances is the fewest instances whose median has a 95%
// distribution-free interval.
const MinInstances = MinPairs

// MethodInstances names the across-instance interval in reports and JSON.
const MethodInstances = "median of per-instance speedups (each the median of its paired block ratios); distribution-free 95% CI from order statistics over server instances (Conover 1999, 3.2; Kalibera and Jones 2013)"

// InstanceSpeedup returns the speedup over server instances: perInstance
// holds each instance's paired ratios (instances without any are left
// out). It returns the interval (nil with fewer than MinInstances
// instances or any ratio not above 0), the instance speedups, and the
// sign test's p-value over them.
func InstanceSpeedup(perInstance [][]float64, rounds int) (ci *Interval, speedups []float64, p float64) {
	var logs []float64
	pairs := 0
	for _, ratios := range perInstance {
		if len(ratios) == 0 {
			continue
		}
		l := make([]float64, len(ratios))
		for i, r := range ratios {
			if !(r > 0) || math.IsInf(r, 0) {
				return nil, nil, 1
			}
			l[i] = math.Log(r)
		}
		m := Median(l)
		logs = append(logs, m)
		speedups = append(speedups, math.Exp(m))
		pairs += len(ratios)
	}
	p = SignTest(logs)
	if len(logs) < MinInstances {
		return nil, speedups, p
	}
	med, lo, hi, cov, ok := MedianCI(logs, Confidence)
	if !ok {
		return nil, speedups, p
	}
	return &Interval{Center: math.Exp(med), Lo: math.Exp(lo), Hi: math.Exp(hi), Confidence: cov,
		Rounds: rounds, Pairs: pairs, Instances: len(logs), Method: MethodInstances}, speedups, p
}

// InstancesForHolm is the fewest server instances over which a sign test
// can pass Holm's adjustment for m comparisons at the 5% level: over k
// instances its p-value is at least 2/2^k, which Holm multiplies by up to
// m, so 2^k must reach 2m/0.05 (9 instances serve up to 12 comparisons).
func InstancesForHolm(m int) int {
	return max(MinInstances, int(math.Ceil(math.Log2(2*float64(max(m, 1))/0.05))))
}
