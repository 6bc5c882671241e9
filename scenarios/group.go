package scenarios

import (
	"context"
	"errors"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// A client stack's agent runs its connections in its own concurrency
// model (threads, processes, one event loop): at load, the timing loop
// hands all of one path's connections to the agent at once
// (drivers.GroupTimer) and records what it returns as Loop records its
// own ops, paced ops from their due times.

// group is the side's connections as one drivers.GroupTimer, when each is
// one (an agent's) and the block is more than one connection's closed
// loop over a count of ops; nil otherwise (each worker's own loop).
func (s *side) group(opt caseRun) drivers.GroupTimer {
	if len(s.ws) < 2 && opt.Rate <= 0 && opt.Duration <= 0 {
		return nil
	}
	var g drivers.GroupTimer
	for _, w := range s.ws {
		gt, ok := w.timer.(drivers.GroupTimer)
		if !ok {
			return nil
		}
		if g == nil {
			g = gt
		}
	}
	return g
}

// timers are the side's connections as the group takes them.
func (s *side) timers() []drivers.BlockTimer {
	ts := make([]drivers.BlockTimer, len(s.ws))
	for i, w := range s.ws {
		ts[i] = w.timer
	}
	return ts
}

// warmGroup runs every worker's warm-up as one closed-loop load, whose
// latencies are dropped.
func (s *side) warmGroup(g drivers.GroupTimer, opt caseRun) error {
	plan := drivers.GroupPlan{N: make([]int, len(s.ws))}
	for i := range plan.N {
		plan.N[i] = opt.Warmup
	}
	res, err := g.TimeGroup(s.ctx, s.timers(), plan)
	if err != nil {
		return err
	}
	for i, w := range s.ws {
		w.warmOK = int64(len(res[i].Ns) - len(res[i].Failed))
	}
	return nil
}

// maxGroupOps bounds the ops of one connection in a block under a
// duration, closed loop, where nothing else does.
const maxGroupOps = 100_000

// timeGroup times block pair j on every worker at once through g (the
// block's clock started at start) and returns the time its ops spanned:
// from its T0 to its last op's end on the agent's clock, or the time the
// group's timer took for it on a clock of its own (GroupResult's
// ElapsedNs: an agent's, dbsock's own), whichever is longer.
func (s *side) timeGroup(ctx context.Context, g drivers.GroupTimer, opt caseRun, j int, start time.Time) time.Duration {
	cfgs := make([]LoopConfig, len(s.ws))
	plan := drivers.GroupPlan{N: make([]int, len(s.ws)), Offsets: make([]time.Duration, len(s.ws))}
	for i, w := range s.ws {
		cfgs[i] = s.loopConfig(opt, j, i, w, start)
		cfgs[i].rest() // the agent waits on its server: its own deadline covers a hang
		plan.N[i], plan.Interval, plan.Offsets[i] = cfgs[i].N, cfgs[i].Interval, cfgs[i].Offset
		if dur := opt.Duration / time.Duration(opt.blocks()); dur > 0 {
			plan.Duration = dur
			plan.N[i] = maxGroupOps / len(s.ws)
			if cfgs[i].Interval > 0 {
				plan.N[i] = min(plan.N[i], int(dur/cfgs[i].Interval)+1)
			}
		}
	}
	res, err := g.TimeGroup(ctx, s.timers(), plan)
	var span int64
	for i, w := range s.ws {
		if err != nil {
			w.sample = Sample{Err: err}
			continue
		}
		var end int64
		w.sample, end = recordGroup(res[i], cfgs[i], w)
		span = max(span, end, res[i].ElapsedNs)
	}
	return time.Duration(span)
}

// recordGroup records one connection's ops of a group block as Loop
// records its own: a paced op's latency from its due time into the
// worker's histogram, from its start into its uncorrected one, its lag
// and its lateness (its start minus when it could start: its due time or
// the end of the op before it). It returns the sample and when the last
// op ended after T0.
func recordGroup(r drivers.GroupResult, cfg LoopConfig, w *worker) (Sample, int64) {
	var s Sample
	bad := make(map[int]string, len(r.Failed))
	for _, f := range r.Failed {
		bad[f.Index] = f.Message
	}
	paced := cfg.Interval > 0 && len(r.LagNs) == len(r.Ns)
	consecutive := 0
	var end int64 // the op before's end, after T0
	for i, d := range r.Ns {
		s.Ops++
		t0 := end
		if paced {
			due := int64(cfg.Offset) + int64(i)*int64(cfg.Interval)
			t0 = due + r.LagNs[i]
			if _, failed := bad[i]; !failed {
				record(w.hists[0], t0+d-due)
				record(w.phases[PhaseUncorrected], d)
				record(w.lag, r.LagNs[i])
				record(w.late, t0-max(due, end))
			}
		}
		end = t0 + d
		msg, failed := bad[i]
		var opErr error
		if failed {
			opErr = errors.New(msg)
		}
		if s.tally(opErr, &consecutive) {
			break
		}
		if !failed && !paced {
			record(w.hists[0], d)
		}
	}
	s.Elapsed = time.Duration(end)
	if cfg.Progress != nil {
		cfg.Progress.Add(s.Ops)
	}
	return s, end
}
