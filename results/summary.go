package results

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
)

// sidePool accumulates one transport's runs of one case.
type sidePool struct {
	side   Side
	hist   *hdrhistogram.Histogram
	phases map[string]*hdrhistogram.Histogram
	nanos  int64
	p50s   []int64
}

func (sp *sidePool) add(run *Run) error {
	sp.side.N += run.N
	sp.side.Errors += run.Errors
	sp.nanos += run.ElapsedNs
	if !run.Incomplete && run.Latency.P50 > 0 {
		sp.p50s = append(sp.p50s, run.Latency.P50)
	}
	h, err := run.Hist()
	if err != nil {
		return err
	}
	if h != nil {
		sp.hist.Merge(h)
	}
	for name, ph := range run.Phases {
		if ph.Histogram == "" {
			continue
		}
		h, err := DecodeHistogram(ph.Histogram)
		if err != nil {
			return err
		}
		if sp.phases[name] == nil {
			sp.phases[name] = NewHistogram()
		}
		sp.phases[name].Merge(h)
	}
	return nil
}

func (sp *sidePool) finish() Side {
	s := sp.side
	s.Latency = LatencyOf(sp.hist)
	if sp.nanos > 0 {
		s.OpsPerSec = float64(s.N-s.Errors) / (float64(sp.nanos) / 1e9)
	}
	if s.N > 0 {
		s.ErrorRate = float64(s.Errors) / float64(s.N)
	}
	if len(sp.phases) > 0 {
		s.Phases = map[string]Latency{}
		for name, h := range sp.phases {
			s.Phases[name] = LatencyOf(h)
		}
	}
	return s
}

// Summarize pools the runs of each case per transport (merging their
// histograms) and sets r.Summary, in the order the cases first appear in
// r.Runs.
func (r *Report) Summarize() error {
	type pool struct {
		sides map[drivers.Transport]*sidePool
		runs  []Run
	}
	var order []Case
	pools := map[Case]*pool{}
	for i := range r.Runs {
		run := &r.Runs[i]
		p, ok := pools[run.Case]
		if !ok {
			p = &pool{sides: map[drivers.Transport]*sidePool{}}
			pools[run.Case] = p
			order = append(order, run.Case)
		}
		p.runs = append(p.runs, *run)
		sp := p.sides[run.Transport]
		if sp == nil {
			sp = &sidePool{hist: NewHistogram(), phases: map[string]*hdrhistogram.Histogram{}}
			p.sides[run.Transport] = sp
		}
		if err := sp.add(run); err != nil {
			return fmt.Errorf("%s %s round %d: %w", run.Target, run.Transport, run.Round, err)
		}
	}
	r.Summary = r.Summary[:0]
	for _, c := range order {
		p := pools[c]
		sum := Summary{Case: c}
		if sp := p.sides[drivers.TCP]; sp != nil {
			sum.TCP = sp.finish()
		}
		if sp := p.sides[drivers.Unix]; sp != nil {
			sum.Unix = sp.finish()
		}
		sum.UnixSpeedupP50 = ratio(float64(sum.TCP.Latency.P50), float64(sum.Unix.Latency.P50))
		sum.UnixSpeedupMean = ratio(sum.TCP.Latency.Mean, sum.Unix.Latency.Mean)
		p50Ratios, meanRatios := speedups(p.runs)
		sum.UnixSpeedupP50CI, sum.UnixSpeedupMeanCI = interval(p50Ratios), interval(meanRatios)
		sum.Verdict = verdict(sum.UnixSpeedupP50CI)
		for _, t := range drivers.Transports {
			sp := p.sides[t]
			if sp == nil {
				continue
			}
			if w := roundSpread(t, sp.p50s, r.Config.Placement.Mode); w != "" {
				sum.Warnings = append(sum.Warnings, w)
			}
			if w := wideMiddle(t, sp.hist, r.Config.Placement.Mode); w != "" {
				sum.Warnings = append(sum.Warnings, w)
			}
		}
		r.Summary = append(r.Summary, sum)
	}
	return nil
}

// Cases returns the distinct cases of target in r.Summary, in order.
func (r *Report) Cases(target string) []Summary {
	var out []Summary
	for _, s := range r.Summary {
		if s.Target == target {
			out = append(out, s)
		}
	}
	return out
}

// Pooled merges the histograms of all runs of one case and transport.
func Pooled(r *Report, c Case, t drivers.Transport) (*hdrhistogram.Histogram, error) {
	h := NewHistogram()
	for _, run := range r.Runs {
		if run.Case != c || run.Transport != t {
			continue
		}
		rh, err := run.Hist()
		if err != nil {
			return nil, err
		}
		if rh != nil {
			h.Merge(rh)
		}
	}
	return h, nil
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
