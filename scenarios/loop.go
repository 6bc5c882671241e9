// Package scenarios holds dbsock's workloads and the one timing loop that
// measures them. Loop owns warmup, timing and recording; drivers only do
// operations and never time themselves.
package scenarios

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/results"
)

// MaxConsecutiveErrors ends a loop early: that many failed ops in a row
// means the connection or server is gone.
const MaxConsecutiveErrors = 10

// Sample is what one Loop did.
type Sample struct {
	// Ops is how many timed ops were attempted; Errors how many failed.
	Ops, Errors int64
	// Elapsed is the wall time of the timed ops.
	Elapsed time.Duration
	// Err is why the loop stopped early (cancelled, or too many errors in a
	// row); nil when all ops ran.
	Err error
	// LastErr is the last op error, if any.
	LastErr error
}

// Loop does warmup untimed ops on c, then n timed ops, recording the latency
// of each successful op into h. Failed ops are counted, not recorded. The
// loop checks ctx every 256 ops; ops themselves get context.Background() so
// that no driver starts a cancellation watcher per op.
//
// Inside the timed loop dbsock does nothing but read the clock twice and
// record one value: no allocation, logging or I/O of its own.
//
// Every 16 ops (warm-up or timed) Loop bumps heartbeat, if set, so that a
// watchdog can tell a hung server from a slow one without a per-op timer.
func Loop(ctx context.Context, c drivers.Conn, warmup, n int, h *hdrhistogram.Histogram, progress, heartbeat *atomic.Int64) Sample {
	op := context.Background()
	var s Sample
	consecutive := 0
	for i := 0; i < warmup; i++ {
		if i&15 == 0 && heartbeat != nil {
			heartbeat.Add(1)
		}
		if i&255 == 0 && ctx.Err() != nil {
			s.Err = ctx.Err()
			return s
		}
		if err := c.Do(op); err != nil {
			s.LastErr = err
			if consecutive++; consecutive >= MaxConsecutiveErrors {
				s.Err = err
				return s
			}
			continue
		}
		consecutive = 0
	}
	consecutive = 0
	start := time.Now()
	for i := 0; i < n; i++ {
		if i&15 == 0 && heartbeat != nil {
			heartbeat.Add(1)
		}
		if i&255 == 0 {
			if ctx.Err() != nil {
				s.Err = ctx.Err()
				break
			}
			if progress != nil && i > 0 {
				progress.Add(256)
			}
		}
		t0 := time.Now()
		err := c.Do(op)
		d := int64(time.Since(t0))
		s.Ops++
		if err != nil {
			s.Errors++
			s.LastErr = err
			if consecutive++; consecutive >= MaxConsecutiveErrors {
				s.Err = err
				break
			}
			continue
		}
		consecutive = 0
		if d > results.HighestNs {
			d = results.HighestNs
		} else if d < results.LowestNs {
			d = results.LowestNs
		}
		_ = h.RecordValue(d) // cannot fail: d is within the histogram's range
	}
	s.Elapsed = time.Since(start)
	if progress != nil && s.Ops > 0 {
		progress.Add((s.Ops-1)%256 + 1) // the ops since the last step
	}
	return s
}
