package results

import (
	"math"
	"sort"

	"golang.org/x/perf/benchmath"

	"github.com/dbsock/dbsock/drivers"
)

// Confidence is the confidence level of the intervals dbsock reports.
const Confidence = 0.95

// Verdicts.
const (
	VerdictUnixFaster    = "Unix faster"
	VerdictTCPFaster     = "TCP faster"
	VerdictNoDifference  = "no significant difference"
	VerdictNeedsMoreRuns = "not enough rounds for an interval"
)

// Interval is a confidence interval around the geometric mean of per-round
// ratios.
type Interval struct {
	Center     float64 `json:"center"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	Rounds     int     `json:"rounds"`
}

// speedups pairs each round's TCP and Unix runs and returns the per-round
// speedups (TCP/Unix) of p50 and of mean, in round order.
func speedups(runs []Run) (p50, mean []float64) {
	type pair struct{ tcp, unix *Run }
	byRound := map[int]*pair{}
	for i := range runs {
		r := &runs[i]
		if r.Incomplete || r.Latency.P50 <= 0 {
			continue
		}
		p := byRound[r.Round]
		if p == nil {
			p = &pair{}
			byRound[r.Round] = p
		}
		if r.Transport == drivers.TCP {
			p.tcp = r
		} else {
			p.unix = r
		}
	}
	rounds := make([]int, 0, len(byRound))
	for rd := range byRound {
		rounds = append(rounds, rd)
	}
	sort.Ints(rounds)
	for _, rd := range rounds {
		p := byRound[rd]
		if p.tcp == nil || p.unix == nil {
			continue
		}
		p50 = append(p50, ratio(float64(p.tcp.Latency.P50), float64(p.unix.Latency.P50)))
		mean = append(mean, ratio(p.tcp.Latency.Mean, p.unix.Latency.Mean))
	}
	return p50, mean
}

// interval is the confidence interval of a ratio's typical value across
// rounds: a Student-t interval (as golang.org/x/perf/benchmath computes it)
// on the logarithms of the ratios, turned back into ratios. Ratios multiply,
// so their logs are what is close to normal; the center is the geometric
// mean and the bounds are always positive. nil with fewer than two values.
func interval(ratios []float64) *Interval {
	if len(ratios) < 2 {
		return nil
	}
	logs := make([]float64, 0, len(ratios))
	for _, r := range ratios {
		if r <= 0 {
			return nil
		}
		logs = append(logs, math.Log(r))
	}
	s := benchmath.AssumeNormal.Summary(benchmath.NewSample(logs, &benchmath.DefaultThresholds), Confidence)
	if math.IsNaN(s.Lo) || math.IsNaN(s.Hi) {
		// All values equal: the interval is the point itself.
		s.Lo, s.Hi = s.Center, s.Center
	}
	return &Interval{Center: math.Exp(s.Center), Lo: math.Exp(s.Lo), Hi: math.Exp(s.Hi), Confidence: Confidence, Rounds: len(ratios)}
}

// verdict reads an interval of speedups.
func verdict(ci *Interval) string {
	switch {
	case ci == nil:
		return VerdictNeedsMoreRuns
	case ci.Lo > 1:
		return VerdictUnixFaster
	case ci.Hi < 1:
		return VerdictTCPFaster
	}
	return VerdictNoDifference
}
