package results

import (
	"fmt"

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
	for i := range r.Runs {
		run := &r.Runs[i]
		k := key{run.Target, run.Scenario}
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
