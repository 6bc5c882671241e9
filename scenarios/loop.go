// Package scenarios holds dbsock's workloads and the one timing loop that
// measures them. The loop owns warm-up, timing and recording; drivers only
// do operations and never time themselves.
//
// It is part of dbsock's own machinery, and its API may change between
// versions: programs that measure their own code use package dbsock.
package scenarios

import (
	"context"
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
	// WarmOK is how many untimed warm-up ops succeeded; WarmWrites how
	// many of them wrote (LoopConfig.Writes).
	WarmOK, WarmWrites int64
	// Writes and WriteErrors are the share of Ops and Errors that wrote,
	// under LoopConfig.Writes.
	Writes, WriteErrors int64
}

// LoopConfig says how long a loop runs and what it reports as it goes.
type LoopConfig struct {
	Warmup int // untimed ops first
	N      int // timed ops
	// Until, when set, ends the timed ops at this time instead of after N
	// (checked after every op).
	Until time.Time
	// Progress counts timed ops done, in steps of 256, for a progress bar.
	Progress *atomic.Int64
	// Heartbeat, when set, beats before ops (as Heartbeat says) and rests
	// while the loop waits for a paced op's due time and after the loop,
	// for the hung-server watchdog (StartWatchdog).
	Heartbeat *Heartbeat
	// Interval, when set, runs the loop open: op i is due at
	// start+Offset+i*Interval.
	Interval, Offset time.Duration
	// Lag, when set, gets each paced op's schedule lag: its actual start
	// minus its due time (results.Generator); Late, the generator's own
	// share of it: its actual start minus when it could start (its due
	// time, or the end of the op before it on the connection, whichever
	// came later).
	Lag, Late *hdrhistogram.Histogram
	// Writes, when set, says which ops write (--op mixed): op i writes
	// when Writes[i%len(Writes)], and a drivers.Keyed op is told so.
	// A write's latency goes into WriteHist instead of the loop's h.
	Writes    []bool
	WriteHist *hdrhistogram.Histogram
	// Keys is how many keys a drivers.Keyed op was handed; the loop walks
	// them, Step (a pipelined op's depth; 1 when 0) per op, starting over
	// at the end, and hands each op its index.
	Keys, Step int
}

// keyWalk is the loop's place in the keys a Keyed op was handed.
type keyWalk struct{ i, n, step int }

// next is the index of the next op's key.
func (k *keyWalk) next() int {
	i := k.i
	if k.i += k.step; k.i >= k.n {
		k.i = drivers.KeyAt(k.i, k.n)
	}
	return i
}

func (cfg *LoopConfig) walk() keyWalk { return keyWalk{n: max(cfg.Keys, 1), step: max(cfg.Step, 1)} }

// kinds walks LoopConfig.Writes in step with the ops.
type kinds struct {
	w []bool
	i int
}

// next says whether the next op writes.
func (k *kinds) next() bool {
	if len(k.w) == 0 {
		return false
	}
	w := k.w[k.i]
	if k.i++; k.i == len(k.w) {
		k.i = 0
	}
	return w
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

// tick does the every-256 bookkeeping at op i; it reports whether the
// loop must stop (cancelled). Until is checked by the loop after every op.
func (cfg *LoopConfig) tick(ctx context.Context, i int, s *Sample) bool {
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
	return false
}

// warmUp does cfg.Warmup untimed ops (heartbeat, no progress). It reports
// false, with the sample saying why, when the loop must not go on.
func warmUp(ctx context.Context, cfg *LoopConfig, op Op) (Sample, bool) {
	var s Sample
	var warm LoopConfig
	hb := cfg.Heartbeat
	consecutive := 0
	k, keys := kinds{w: cfg.Writes}, cfg.walk()
	ko, keyed := op.(drivers.Keyed)
	bg := context.Background()
	for i := 0; i < cfg.Warmup; i++ {
		if warm.tick(ctx, i, &s) && s.Err != nil {
			return s, false
		}
		write := k.next()
		if hb != nil {
			hb.beat()
		}
		var err error
		if keyed {
			err = ko.DoKey(bg, keys.next(), write)
		} else {
			err = op.Do(bg)
		}
		if write && err == nil {
			s.WarmWrites++
		}
		if s.tally(err, &consecutive) {
			return s, false
		}
	}
	return Sample{WarmOK: int64(cfg.Warmup) - s.Errors, WarmWrites: s.WarmWrites}, true
}

// finish records the elapsed time and the last progress step, and rests
// the heartbeat.
func (cfg *LoopConfig) finish(s *Sample, start time.Time) {
	s.Elapsed = time.Since(start)
	cfg.rest()
	if cfg.Progress != nil && s.Ops > 0 {
		cfg.Progress.Add((s.Ops-1)%256 + 1) // the ops since the last step
	}
}

// rest says the loop waits on no server (Heartbeat.rest), when it has a
// heartbeat.
func (cfg *LoopConfig) rest() {
	if cfg.Heartbeat != nil {
		cfg.Heartbeat.rest()
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

// Op is one operation the loop times. drivers.Conn is one (a lookup on a
// kept connection); so is the connect scenario's open, lookup and close.
type Op interface {
	Do(ctx context.Context) error
}

// Loop is dbsock's one timing loop. It does cfg.Warmup untimed ops, then
// times each op on its own and records its latency into h; failed ops are
// counted, not recorded. Closed loop (cfg.Interval 0), each op starts when
// the previous one ends. Open loop, op i is due at start+cfg.Offset+
// i*cfg.Interval whether or not the one before it has finished: h gets each
// op's latency from when it was due (what a user waiting on the schedule
// sees, corrected for coordinated omission, as wrk2 and YCSB do) and actual
// gets it from when it really started. Under cfg.Writes (--op mixed) a
// write's latency goes into cfg.WriteHist instead of h.
//
// Ops get context.Background() so that no driver starts a cancellation
// watcher per op; ctx is checked every 256 ops. Inside the timed loop
// dbsock does nothing but read the clock twice and record one value: no
// allocation, logging or I/O of its own.
func Loop(ctx context.Context, op Op, cfg LoopConfig, h, actual *hdrhistogram.Histogram) Sample {
	bg := context.Background()
	s, ok := warmUp(ctx, &cfg, op)
	if !ok {
		cfg.rest()
		return s
	}
	hb := cfg.Heartbeat
	ko, keyed := op.(drivers.Keyed)
	keys := cfg.walk()
	consecutive := 0
	n := cfg.n()
	paced := cfg.Interval > 0
	var pace *pacer // one for the whole loop: no allocation per op
	if paced {
		pace = newPacer()
		defer pace.stop()
	}
	k := kinds{w: cfg.Writes}
	until := !cfg.Until.IsZero()
	start := time.Now()
	now, due, ready := start, start, start
	slow := true // the first op beats
	for i := 0; i < n; i++ {
		if cfg.tick(ctx, i, &s) || (until && now.After(cfg.Until)) {
			break
		}
		if paced {
			due = start.Add(cfg.Offset + time.Duration(i)*cfg.Interval)
			if !cfg.Until.IsZero() && due.After(cfg.Until) {
				break
			}
			// The op could start when due, or when the op before it ended
			// (now) if the connection was busy until then.
			ready = later(due, now)
			cfg.rest() // waiting for the op's time is not a server's silence
			if err := pace.waitUntil(ctx, due); err != nil {
				s.Err = err
				break
			}
		}
		write := k.next()
		if hb != nil && (slow || paced || i&15 == 0) {
			hb.beat() // see Heartbeat: a quick op's beat waits for the 16th
		}
		var err error
		t0 := time.Now()
		if keyed {
			err = ko.DoKey(bg, keys.next(), write)
		} else {
			err = op.Do(bg)
		}
		now = time.Now()
		took := now.Sub(t0)
		slow = took >= QuickOp
		s.Ops++
		into := h
		if write {
			into = cfg.WriteHist
			s.Writes++
			if err != nil {
				s.WriteErrors++
			}
		}
		if s.tally(err, &consecutive) {
			break
		}
		if err != nil {
			continue
		}
		if paced {
			cfg.recordPaced(into, actual, due, ready, t0, now)
		} else {
			record(into, int64(took))
		}
	}
	cfg.finish(&s, start)
	return s
}

// recordPaced records a paced op due at due, that could start at ready
// (its due time, or the end of the op before it on the connection) and
// ran from t0 to end: its latency from when it was due into into (what a
// user waiting on the schedule sees), from when it started into actual,
// and its schedule lag and the generator's own lateness (Lag, Late).
func (cfg *LoopConfig) recordPaced(into, actual *hdrhistogram.Histogram, due, ready, t0, end time.Time) {
	record(into, int64(end.Sub(due)))
	record(actual, int64(end.Sub(t0)))
	if cfg.Lag != nil {
		record(cfg.Lag, int64(t0.Sub(due)))
		record(cfg.Late, int64(t0.Sub(ready)))
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Opener opens a fresh connection, as the connect scenario does per op.
type Opener func(ctx context.Context) (drivers.Conn, error)

// connectOp is the connect scenario's op: open a connection, do one lookup,
// close it. It times its two phases into connect and query. It uses its own
// ctx: the set-up it measures dwarfs the cost of a cancellable context, and
// a hung server must not hang dbsock.
type connectOp struct {
	ctx            context.Context
	open           Opener
	connect, query *hdrhistogram.Histogram
	// dial, tls and login, when set, split connect where the driver says
	// when its socket connected and its TLS handshake ended
	// (drivers.Trace): the socket's connect, the handshake, and the rest
	// (the protocol's handshake, authentication, set-up).
	dial, tls, login *hdrhistogram.Histogram
	secure           bool    // the path is TLS: no split without the handshake's end
	ids              []int64 // the rows the next ops read (UseKeys)
	dialed, secured  time.Time
	trace            context.Context // ctx with a Trace into dialed and secured
}

// traced is the op's context with a Trace that stamps dialed and secured,
// made once: the op's connections are opened one at a time.
func (c *connectOp) traced() context.Context {
	if c.trace == nil {
		c.trace = drivers.WithTrace(c.ctx, &drivers.Trace{
			Dialed:  func() { c.dialed = time.Now() },
			Secured: func() { c.secured = time.Now() },
		})
	}
	return c.trace
}

// UseKeys implements drivers.Keyed: each fresh connection reads the next
// of ids.
func (c *connectOp) UseKeys(ids []int64) { c.ids = append(c.ids[:0], ids...) }

func (c *connectOp) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey opens a connection, does one op on key i (a write when write) and
// closes it.
func (c *connectOp) DoKey(_ context.Context, i int, write bool) error {
	ctx := c.ctx
	if c.dial != nil {
		ctx = c.traced()
		c.dialed, c.secured = time.Time{}, time.Time{}
	}
	t0 := time.Now()
	conn, err := c.open(ctx)
	t1 := time.Now()
	if err != nil {
		return err
	}
	opened := t1
	kc, keyed := conn.(drivers.Keyed)
	if keyed && len(c.ids) > 0 {
		kc.UseKeys(c.ids[i : i+1])
		t1 = time.Now() // naming the key is not the connect phase
	}
	if keyed {
		err = kc.DoKey(c.ctx, 0, write)
	} else {
		err = conn.Do(c.ctx)
	}
	t2 := time.Now()
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		record(c.connect, int64(t1.Sub(t0)))
		record(c.query, int64(t2.Sub(t1)))
		c.recordParts(t0, opened)
	}
	return err
}

// recordParts splits the connect phase (t0 to opened) at the moments the
// driver said, where it said them in order.
func (c *connectOp) recordParts(t0, opened time.Time) {
	if c.dial == nil || c.dialed.IsZero() || c.dialed.Before(t0) || c.dialed.After(opened) {
		return
	}
	ready := c.dialed
	if c.secure {
		if c.secured.IsZero() || c.secured.Before(c.dialed) || c.secured.After(opened) {
			return // the driver did not say when its handshake ended
		}
		record(c.tls, int64(c.secured.Sub(c.dialed)))
		ready = c.secured
	}
	record(c.dial, int64(c.dialed.Sub(t0)))
	record(c.login, int64(opened.Sub(ready)))
}
