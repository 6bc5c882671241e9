package scenarios

import (
	"context"
	"errors"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
)

// timedElsewhere is Loop for a connection whose ops are timed where they
// are done (a drivers.BlockTimer: a client stack's agent): it hands the
// connection cfg.Warmup ops, whose latencies it drops, then cfg.N ops, and
// records the latency of each one that succeeded into h, as Loop records
// its own. Failed ops are counted, not recorded, and MaxConsecutiveErrors
// in a row end the block there, as in Loop. It waits on no server itself
// (the timer has its own deadline per request), so its heartbeat rests.
// Only the closed loop over cfg.N ops (no Until, Interval or Writes) is
// timed this way.
func timedElsewhere(ctx context.Context, bt drivers.BlockTimer, cfg LoopConfig, h *hdrhistogram.Histogram) Sample {
	var s Sample
	cfg.rest()
	if cfg.Warmup > 0 {
		_, failed, err := bt.TimeBlock(ctx, cfg.Warmup)
		if err != nil {
			s.Err = err
			return s
		}
		s.WarmOK = int64(cfg.Warmup - len(failed))
	}
	if cfg.N <= 0 {
		return s
	}
	start := time.Now()
	ns, failed, err := bt.TimeBlock(ctx, cfg.N)
	s.Elapsed = time.Since(start)
	if err != nil && !errors.Is(err, drivers.ErrDisbelieved) {
		s.Err = err // the ops it timed before it failed are kept, as Loop keeps its own
	} else if err != nil {
		s.Err = err
		return s
	}
	s.Ops = int64(len(ns))
	bad := make(map[int]string, len(failed))
	for _, f := range failed {
		bad[f.Index] = f.Message
	}
	consecutive := 0
	for i, d := range ns {
		msg, failed := bad[i]
		var opErr error
		if failed {
			opErr = errors.New(msg)
		}
		if s.tally(opErr, &consecutive) {
			s.Ops = int64(i + 1)
			break
		}
		if !failed {
			record(h, d)
		}
	}
	if cfg.Progress != nil {
		cfg.Progress.Add(s.Ops)
	}
	return s
}
