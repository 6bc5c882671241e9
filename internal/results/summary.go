package results

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
)

// Summarize pools the runs of each target and scenario per transport
// (merging their histograms) and sets r.Summary, in the order the targets
// first appear in r.Runs.
func (r *Report) Summarize() error {
	type key struct{ target, scenario string }
	type pool struct {
		side  map[drivers.Transport]*Side
		hist  map[drivers.Transport]*hdrhistogram.Histogram
		nanos map[drivers.Transport]int64
	}
	var order []key
	pools := map[key]*pool{}
	runsOf := map[key][]Run{}
	p50s := map[key]map[drivers.Transport][]int64{}
	for i := range r.Runs {
		run := &r.Runs[i]
		k := key{run.Target, run.Scenario}
		runsOf[k] = append(runsOf[k], *run)
		p, ok := pools[k]
		if !ok {
			p = &pool{side: map[drivers.Transport]*Side{}, hist: map[drivers.Transport]*hdrhistogram.Histogram{}, nanos: map[drivers.Transport]int64{}}
			pools[k] = p
			order = append(order, k)
		}
		if p.side[run.Transport] == nil {
			p.side[run.Transport] = &Side{}
			p.hist[run.Transport] = NewHistogram()
		}
		if p50s[k] == nil {
			p50s[k] = map[drivers.Transport][]int64{}
		}
		if !run.Incomplete && run.Latency.P50 > 0 {
			p50s[k][run.Transport] = append(p50s[k][run.Transport], run.Latency.P50)
		}
		s := p.side[run.Transport]
		s.N += run.N
		s.Errors += run.Errors
		p.nanos[run.Transport] += run.ElapsedNs
		if run.Histogram != "" {
			h, err := DecodeHistogram(run.Histogram)
			if err != nil {
				return fmt.Errorf("%s %s round %d: %w", run.Target, run.Transport, run.Round, err)
			}
			p.hist[run.Transport].Merge(h)
		}
	}
	r.Summary = r.Summary[:0]
	for _, k := range order {
		p := pools[k]
		sum := Summary{Target: k.target, Scenario: k.scenario}
		for t, s := range p.side {
			s.Latency = LatencyOf(p.hist[t])
			if ns := p.nanos[t]; ns > 0 {
				s.OpsPerSec = float64(s.N-s.Errors) / (float64(ns) / 1e9)
			}
			if t == drivers.TCP {
				sum.TCP = *s
			} else {
				sum.Unix = *s
			}
		}
		sum.UnixSpeedupP50 = ratio(float64(sum.TCP.Latency.P50), float64(sum.Unix.Latency.P50))
		sum.UnixSpeedupMean = ratio(sum.TCP.Latency.Mean, sum.Unix.Latency.Mean)
		p50Ratios, meanRatios := speedups(runsOf[k])
		sum.UnixSpeedupP50CI, sum.UnixSpeedupMeanCI = interval(p50Ratios), interval(meanRatios)
		sum.Verdict = verdict(sum.UnixSpeedupP50CI)
		for _, t := range drivers.Transports {
			if w := roundSpread(t, p50s[k][t], r.Config.Placement.Mode); w != "" {
				sum.Warnings = append(sum.Warnings, w)
			}
			if w := wideMiddle(t, p.hist[t], r.Config.Placement.Mode); w != "" {
				sum.Warnings = append(sum.Warnings, w)
			}
		}
		r.Summary = append(r.Summary, sum)
	}
	return nil
}

func ratio(tcp, unix float64) float64 {
	if tcp <= 0 || unix <= 0 {
		return 0
	}
	return tcp / unix
}

// UnstableSpread is the ratio between the slowest and fastest round's p50
// above which the rounds are said to disagree.
const UnstableSpread = 1.25

// roundSpread warns when one transport's p50 moved by more than
// UnstableSpread between rounds: on small machines that is usually CPU
// placement (a server woken on another CPU), not the transport.
func roundSpread(t drivers.Transport, p50s []int64, placementMode string) string {
	if len(p50s) < 2 {
		return ""
	}
	lo, hi := p50s[0], p50s[0]
	for _, v := range p50s {
		lo, hi = min(lo, v), max(hi, v)
	}
	if float64(hi) <= UnstableSpread*float64(lo) {
		return ""
	}
	advice := "This is usually CPU placement; pin client and server with --placement same (or split) and run again."
	if placementMode != "" && placementMode != "none" {
		advice = "Client and server were pinned, so look for other load on the machine, or run more rounds with a larger --n."
	}
	return fmt.Sprintf("%s p50 ranged from %s to %s across rounds (%.2f×): the rounds disagree, so the pooled numbers and the speedup are not solid. %s",
		t.Label(), time.Duration(lo), time.Duration(hi), float64(hi)/float64(lo), advice)
}

// Pooled merges the histograms of all complete and incomplete runs of one
// target, scenario and transport.
func Pooled(r *Report, target, scenario string, t drivers.Transport) (*hdrhistogram.Histogram, error) {
	h := NewHistogram()
	for _, run := range r.Runs {
		if run.Target != target || run.Scenario != scenario || run.Transport != t || run.Histogram == "" {
			continue
		}
		rh, err := DecodeHistogram(run.Histogram)
		if err != nil {
			return nil, err
		}
		h.Merge(rh)
	}
	return h, nil
}

// BimodalSpread is the p75/p25 ratio above which the middle half of a
// distribution is said to be too wide to have one typical value.
const BimodalSpread = 2.0

// wideMiddle warns when the middle half of a transport's pooled latencies
// spans more than BimodalSpread: typically two modes (some ops served on the
// client's CPU, some waking the server on another), where p50 can land on
// either one.
func wideMiddle(t drivers.Transport, h *hdrhistogram.Histogram, placementMode string) string {
	if h == nil || h.TotalCount() < 100 {
		return ""
	}
	p25, p75 := h.ValueAtQuantile(25), h.ValueAtQuantile(75)
	if p25 <= 0 || float64(p75) <= BimodalSpread*float64(p25) {
		return ""
	}
	advice := "pin client and server with --placement same (or split) and run again."
	if placementMode != "" && placementMode != "none" {
		advice = "look for other load on the machine."
	}
	return fmt.Sprintf("%s latencies have a wide middle: p25 %s, p75 %s (%.1f×). The distribution is likely bimodal, so p50 may land on either mode; %s",
		t.Label(), time.Duration(p25), time.Duration(p75), float64(p75)/float64(p25), advice)
}
