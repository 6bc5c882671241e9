package results

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics dbsock reports, and where they come from:
//
//   - The speedup is estimated from block pairs: each pair is one TCP block
//     and one Unix block that ran back to back, and gives one ratio TCP/Unix
//     (of the blocks' p50s, or of their means). The estimate is the median
//     of the paired ratios, which one bad block cannot move.
//   - Its confidence interval is the distribution-free interval of a median
//     from order statistics: with n ratios sorted, [x(k), x(n-k+1)] where k
//     is the largest order with P(B <= k-1) <= (1-C)/2 for B ~ Binomial(n,
//     1/2) (W. J. Conover, Practical Nonparametric Statistics, 3rd ed.,
//     1999, section 3.2; the binomial from gonum's distuv). It assumes no
//     distribution, only that the pairs are independent.
//   - The sign test gives the p-value of "ratios above and below 1 are
//     equally likely" (Conover, section 3.4); in a report with several
//     cases the p-values are adjusted with Holm's step-down method (S. Holm,
//     A simple sequentially rejective multiple test procedure, Scandinavian
//     Journal of Statistics 6, 1979).
//   - Noisy blocks are flagged with the modified z-score 0.6745*(x-median)/
//     MAD on the blocks' p50s, |z| > 3.5 (B. Iglewicz and D. C. Hoaglin, How
//     to Detect and Handle Outliers, ASQC, 1993).

// Confidence is the confidence level of the intervals dbsock reports.
const Confidence = 0.95

// Alpha is the significance level of the verdicts (1 - Confidence).
const Alpha = 1 - Confidence

// Band is the practical band of the verdicts: a speedup whose whole
// interval lies within 1/(1+Band) and 1+Band is "no meaningful difference".
const Band = 0.02

// MinPairs is the fewest pairs whose median has a 95% distribution-free
// interval (with 5, the extremes cover only 93.75%).
const MinPairs = 6

// Method names the interval method in reports and JSON.
const Method = "median of paired block ratios; distribution-free 95% CI from order statistics (Conover 1999, 3.2)"

// VerdictKind is what a case's p50 interval says, as a value; package
// reports puts it in words.
type VerdictKind string

// The verdicts a case can get.
const (
	// UnixFaster: the interval lies above 1 (and, with several cases, the
	// Holm-adjusted sign test is significant).
	UnixFaster VerdictKind = "unix_faster"
	// TCPFaster: the interval lies below 1 (likewise significant).
	TCPFaster VerdictKind = "tcp_faster"
	// PathFaster: a further path's interval (TCP over it) lies above 1:
	// that path is faster than TCP (likewise significant).
	PathFaster VerdictKind = "path_faster"
	// BaselineFaster: the interval lies below 1 in a comparison whose
	// baseline is not TCP (--baseline): the baseline is faster.
	BaselineFaster VerdictKind = "baseline_faster"
	// NoDifference: the interval lies inside the ±Band practical band.
	NoDifference VerdictKind = "no_difference"
	// Undecided: the interval straddles 1 and is wider than the band.
	Undecided VerdictKind = "undecided"
	// NotSignificant: the interval excludes 1, but the sign test is not
	// significant after Holm's adjustment over the report's cases.
	NotSignificant VerdictKind = "not_significant"
	// TooFewPairs: fewer than MinPairs block pairs, so no interval.
	TooFewPairs VerdictKind = "too_few_pairs"
	// TooFewInstances: the case ran on fewer than MinInstances server
	// instances (--instances), so no interval over them.
	TooFewInstances VerdictKind = "too_few_instances"
	// NoResult: every op of one transport failed: there is no latency to
	// compare.
	NoResult VerdictKind = "no_result"
	// FellBehind: at a rate (an open loop), the generator did not keep
	// its schedule on one of the two paths (Generator): its latencies are
	// its own lateness as much as the server's, so no side wins.
	FellBehind VerdictKind = "fell_behind"
)

// Winner says whether the verdict names a faster side: a significant
// difference outside the practical band.
func (k VerdictKind) Winner() bool {
	switch k {
	case UnixFaster, TCPFaster, PathFaster, BaselineFaster:
		return true
	}
	return false
}

// Interval is a confidence interval of the median paired ratio.
type Interval struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Confidence is the interval's exact coverage (at least 0.95: order
	// statistics give discrete levels; exactly 0.95 over instances).
	Confidence float64 `json:"confidence"`
	// Rounds and Pairs count what the interval was computed from;
	// Instances, the server instances, when the interval is over them
	// (MethodInstances).
	Rounds    int    `json:"rounds"`
	Pairs     int    `json:"pairs"`
	Instances int    `json:"instances,omitempty"`
	Method    string `json:"method,omitempty"`
}

// HalfWidth is the interval's relative half-width: (hi-lo)/2/center.
func (ci *Interval) HalfWidth() float64 {
	if ci == nil || ci.Center <= 0 {
		return math.Inf(1)
	}
	return (ci.Hi - ci.Lo) / 2 / ci.Center
}

// Median returns the median of xs (the mean of the middle two for an even
// count); NaN for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := sortedCopy(xs)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}

// binomCDF is P(B <= k) for B ~ Binomial(n, 1/2).
func binomCDF(n, k int) float64 {
	return distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
}

// MedianCI returns the median of xs and its distribution-free confidence
// interval at level conf, with the interval's exact coverage. ok is false
// when xs is too small for any interval at that level.
func MedianCI(xs []float64, conf float64) (med, lo, hi, coverage float64, ok bool) {
	n := len(xs)
	med = Median(xs)
	if n == 0 {
		return med, 0, 0, 0, false
	}
	s := sortedCopy(xs)
	tail := (1 - conf) / 2
	k := 0 // the largest order k with P(B <= k-1) <= tail
	for c := 1; c <= n/2; c++ {
		if binomCDF(n, c-1) > tail {
			break
		}
		k = c
	}
	if k == 0 {
		return med, 0, 0, 0, false
	}
	return med, s[k-1], s[n-k], 1 - 2*binomCDF(n, k-1), true
}

// SignTest returns the two-sided sign test p-value of xs against 0: how
// likely so lopsided a split of positive and negative values would be if
// each were equally likely. Zeros are dropped; 1 when nothing is left.
func SignTest(xs []float64) float64 {
	pos, neg := 0, 0
	for _, x := range xs {
		switch {
		case x > 0:
			pos++
		case x < 0:
			neg++
		}
	}
	n := pos + neg
	if n == 0 {
		return 1
	}
	return math.Min(1, 2*binomCDF(n, min(pos, neg)))
}

// Holm adjusts p-values for multiple comparisons by Holm's step-down
// method: sorted ascending, the i-th smallest (from 1) becomes the running
// maximum of (m-i+1)*p, capped at 1. The result is in the input's order.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, m)
	running := 0.0
	for i, j := range idx {
		running = math.Max(running, math.Min(1, float64(m-i)*ps[j]))
		out[j] = running
	}
	return out
}

// NoisyZ is the modified z-score beyond which a block is flagged as noisy
// (Iglewicz and Hoaglin's recommended cut-off).
const NoisyZ = 3.5

// NoisyMinDeviation is the smallest relative distance from the median that
// is flagged: blocks within 20% of their transport's median are never
// called noisy, however tight the others are (on small VMs blocks wobble by
// 10% without anything being wrong; noise episodes move them by 30 to 50%).
const NoisyMinDeviation = 0.20

// RobustZ returns the modified z-score 0.6745*(x-median)/MAD of every
// value. When the MAD is 0 (over half the values equal), the mean absolute
// deviation stands in (z = (x-median)/(1.253314*meanAD)), as Iglewicz and
// Hoaglin suggest; all zeros when that is 0 too.
func RobustZ(xs []float64) []float64 {
	z := make([]float64, len(xs))
	if len(xs) < 3 {
		return z
	}
	med := Median(xs)
	dev := make([]float64, len(xs))
	sum := 0.0
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
		sum += dev[i]
	}
	mad := Median(dev)
	scale := mad / 0.6745
	if mad == 0 {
		scale = 1.253314 * sum / float64(len(xs))
	}
	if scale == 0 {
		return z
	}
	for i, x := range xs {
		z[i] = (x - med) / scale
	}
	return z
}

// Noisy reports which values are far from the others: |RobustZ| >
// NoisyZ and further than NoisyMinDeviation from the median.
func Noisy(xs []float64) []bool {
	z := RobustZ(xs)
	med := Median(xs)
	out := make([]bool, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(z[i]) > NoisyZ && med > 0 && math.Abs(x/med-1) > NoisyMinDeviation
	}
	return out
}

// PairedSpeedup summarizes paired ratios (TCP/Unix, one per block pair):
// the median ratio and its distribution-free interval, computed on the
// logarithms (the median commutes with the log, so this only keeps the
// arithmetic in the space where ratios add). nil with fewer than MinPairs
// ratios or any ratio not above 0.
func PairedSpeedup(ratios []float64, rounds int) *Interval {
	if len(ratios) < MinPairs {
		return nil
	}
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		if !(r > 0) || math.IsInf(r, 0) {
			return nil
		}
		logs[i] = math.Log(r)
	}
	med, lo, hi, cov, ok := MedianCI(logs, Confidence)
	if !ok {
		return nil
	}
	return &Interval{Center: math.Exp(med), Lo: math.Exp(lo), Hi: math.Exp(hi), Confidence: cov,
		Rounds: rounds, Pairs: len(ratios), Method: Method}
}

// medianRatio is the median of ratios (0 when there are none).
func medianRatio(ratios []float64) float64 {
	if len(ratios) == 0 {
		return 0
	}
	return Median(ratios)
}

// Judge reads an interval of speedups and the Holm-adjusted p-value of
// its sign test (the same as the raw one when the report has one case).
func Judge(ci *Interval, pHolm float64) VerdictKind {
	switch {
	case ci == nil:
		return TooFewPairs
	case ci.Lo >= 1/(1+Band) && ci.Hi <= 1+Band:
		return NoDifference
	case (ci.Lo > 1 || ci.Hi < 1) && pHolm >= Alpha:
		return NotSignificant
	case ci.Lo > 1:
		return UnixFaster
	case ci.Hi < 1:
		return TCPFaster
	}
	return Undecided
}

// MoreBlockPairs estimates by how many times the block pairs would have
// to grow to settle an undecided interval: its half-width shrinks about
// as 1/sqrt(pairs), and it must either exclude 1 or fit inside the band.
// It is +Inf when the difference, if any, is too small to resolve.
func MoreBlockPairs(ci *Interval) float64 {
	half := (math.Log(ci.Hi) - math.Log(ci.Lo)) / 2
	c := math.Abs(math.Log(ci.Center))
	need := math.Inf(1)
	if c > 0 {
		need = math.Pow(half/c, 2)
	}
	if b := math.Log(1 + Band); c < b {
		need = math.Min(need, math.Pow(half/(b-c), 2))
	}
	if need > 100 || math.IsNaN(need) {
		return math.Inf(1)
	}
	return math.Ceil(need * 1.2)
}
