// Package scenarios holds dbsock's workloads and the timing loops that
// measure them. The loops own warm-up, timing and recording; drivers only
// do operations and never time themselves.
package scenarios

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// MaxConsecutiveErrors ends a loop early: that many failed ops in a row
// means the connection or server is gone.
const MaxConsecutiveErrors = 10

// Sample is what one loop did.
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

// LoopConfig says how long a loop runs and what it reports as it goes.
type LoopConfig struct {
	Warmup int // untimed ops first
	N      int // timed ops
	// Until, when set, ends the timed ops at this time instead of after N
	// (checked every 256 ops, and every op in open-loop mode).
	Until time.Time
	// Progress counts timed ops done, in steps of 256, for a progress bar.
	Progress *atomic.Int64
	// Heartbeat moves every 16 ops, for the hung-server watchdog.
	Heartbeat *atomic.Int64
}

// tally counts one op's outcome; it reports whether the loop must stop.
func (s *Sample) tally(err error, consecutive *int) bool {
	if err == nil {
		*consecutive = 0
		return false
	}
	s.Errors++
	s.LastErr = err
	*consecutive++
	if *consecutive >= MaxConsecutiveErrors {
		s.Err = err
		return true
	}
	return false
}

// tick does the every-16 and every-256 bookkeeping at op i; it reports
// whether the loop must stop (cancelled, or past Until).
func (cfg *LoopConfig) tick(ctx context.Context, i int, s *Sample, now time.Time) bool {
	if i&15 == 0 && cfg.Heartbeat != nil {
		cfg.Heartbeat.Add(1)
	}
	if i&255 != 0 {
		return false
	}
	if err := ctx.Err(); err != nil {
		s.Err = err
		return true
	}
	if i > 0 && cfg.Progress != nil {
		cfg.Progress.Add(256)
	}
	return !cfg.Until.IsZero() && now.After(cfg.Until)
}

// warmUp does cfg.Warmup untimed ops (heartbeat, no progress). It reports
// false, with the sample saying why, when the loop must not go on.
func warmUp(ctx context.Context, cfg *LoopConfig, op func() error) (Sample, bool) {
	var s Sample
	warm := LoopConfig{Heartbeat: cfg.Heartbeat}
	consecutive := 0
	for i := 0; i < cfg.Warmup; i++ {
		if warm.tick(ctx, i, &s, time.Time{}) && s.Err != nil {
			return s, false
		}
		if s.tally(op(), &consecutive) {
			return s, false
		}
	}
	return Sample{}, true
}

// finish records the elapsed time and the last progress step.
func (cfg *LoopConfig) finish(s *Sample, start time.Time) {
	s.Elapsed = time.Since(start)
	if cfg.Progress != nil && s.Ops > 0 {
		cfg.Progress.Add((s.Ops-1)%256 + 1) // the ops since the last step
	}
}

// n is the number of timed ops to attempt: N, or unbounded until Until.
func (cfg *LoopConfig) n() int {
	if !cfg.Until.IsZero() {
		return int(^uint(0) >> 1)
	}
	return cfg.N
}

// record puts d into h, clamped to the histogram's range.
func record(h *hdrhistogram.Histogram, d int64) {
	if d > results.HighestNs {
		d = results.HighestNs
	} else if d < results.LowestNs {
		d = results.LowestNs
	}
	_ = h.RecordValue(d) // cannot fail: d is within the histogram's range
}

// Loop does cfg.Warmup untimed ops on c, then timed ops, recording the
// latency of each successful op into h. Failed ops are counted, not
// recorded. Ops get context.Background() so that no driver starts a
// cancellation watcher per op; ctx is checked every 256 ops.
//
// Inside the timed loop dbsock does nothing but read the clock twice and
// record one value: no allocation, logging or I/O of its own.
func Loop(ctx context.Context, c drivers.Conn, cfg LoopConfig, h *hdrhistogram.Histogram) Sample {
	op := context.Background()
	s, ok := warmUp(ctx, &cfg, func() error { return c.Do(op) })
	if !ok {
		return s
	}
	consecutive := 0
	n := cfg.n()
	start := time.Now()
	now := start
	for i := 0; i < n; i++ {
		if cfg.tick(ctx, i, &s, now) {
			break
		}
		t0 := time.Now()
		err := c.Do(op)
		now = time.Now()
		s.Ops++
		if s.tally(err, &consecutive) {
			break
		}
		if err == nil {
			record(h, int64(now.Sub(t0)))
		}
	}
	cfg.finish(&s, start)
	return s
}

// Opener opens a fresh connection, as the connect scenario does per op.
type Opener func(ctx context.Context) (drivers.Conn, error)

// LoopConnect times ops that each open a connection, do one lookup and
// close it. total gets the whole op; connect and query its two phases.
// ctx is passed to every op: the connection set-up it measures dwarfs the
// cost of a cancellable context, and a hung server must not hang dbsock.
func LoopConnect(ctx context.Context, open Opener, cfg LoopConfig, total, connect, query *hdrhistogram.Histogram) Sample {
	consecutive := 0
	one := func() (time.Duration, time.Duration, time.Duration, error) {
		t0 := time.Now()
		c, err := open(ctx)
		t1 := time.Now()
		if err != nil {
			return 0, 0, 0, err
		}
		err = c.Do(ctx)
		t2 := time.Now()
		cerr := c.Close()
		t3 := time.Now()
		if err == nil {
			err = cerr
		}
		return t3.Sub(t0), t1.Sub(t0), t2.Sub(t1), err
	}
	s, ok := warmUp(ctx, &cfg, func() error { _, _, _, err := one(); return err })
	if !ok {
		return s
	}
	n := cfg.n()
	start := time.Now()
	now := start
	for i := 0; i < n; i++ {
		if cfg.tick(ctx, i, &s, now) {
			break
		}
		tot, con, qry, err := one()
		now = time.Now()
		s.Ops++
		if s.tally(err, &consecutive) {
			break
		}
		if err == nil {
			record(total, int64(tot))
			record(connect, int64(con))
			record(query, int64(qry))
		}
	}
	cfg.finish(&s, start)
	return s
}

// LoopRate is the open-loop form of Loop: op i is due at start+offset+
// i*interval, whether or not the op before it has finished. corrected gets
// each op's latency from when it was due (what a user waiting on the
// schedule sees, corrected for coordinated omission, as wrk2 and YCSB do);
// actual gets it from when it really started.
func LoopRate(ctx context.Context, c drivers.Conn, cfg LoopConfig, interval, offset time.Duration, corrected, actual *hdrhistogram.Histogram) Sample {
	op := context.Background()
	s, ok := warmUp(ctx, &cfg, func() error { return c.Do(op) })
	if !ok {
		return s
	}
	consecutive := 0
	n := cfg.n()
	sleepSlack() // calibrate before the clock starts
	start := time.Now()
	now := start
	for i := 0; i < n; i++ {
		if cfg.tick(ctx, i, &s, now) || (!cfg.Until.IsZero() && now.After(cfg.Until)) {
			break
		}
		due := start.Add(offset + time.Duration(i)*interval)
		waitUntil(due)
		t0 := time.Now()
		err := c.Do(op)
		now = time.Now()
		s.Ops++
		if s.tally(err, &consecutive) {
			break
		}
		if err == nil {
			record(corrected, int64(now.Sub(due)))
			record(actual, int64(now.Sub(t0)))
		}
	}
	cfg.finish(&s, start)
	return s
}

// sleepSlack is how late a timer sleep may wake up on this machine: on some
// VMs timers fire with about a millisecond of slack, which open-loop mode
// would otherwise charge to the server as latency. Measured once.
var sleepSlack = sync.OnceValue(func() time.Duration {
	var worst time.Duration
	for i := 0; i < 20; i++ {
		t := time.Now()
		time.Sleep(50 * time.Microsecond)
		worst = max(worst, time.Since(t)-50*time.Microsecond)
	}
	return worst + worst/2 + 20*time.Microsecond
})

// waitUntil returns at t: it sleeps while t is further away than the
// timer's slack and spins the last stretch, yielding between clock reads.
func waitUntil(t time.Time) {
	if wait, slack := time.Until(t), sleepSlack(); wait > slack {
		time.Sleep(wait - slack)
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}
