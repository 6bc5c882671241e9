package scenarios

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNoAnswer is wrapped by the error of a run whose watchdog gave up on
// a server that stopped answering: such a server is stopped without grace.
var ErrNoAnswer = errors.New("the server did not answer")

// DefaultOpTimeout is how long dbsock waits for a server that stopped
// answering before it gives up on the connection.
const DefaultOpTimeout = 10 * time.Second

// QuickOp is the latency below which an op leaves its heartbeat to the
// next 16th op (Heartbeat).
const QuickOp = 256 * time.Microsecond

// Heartbeat is what one timing loop shows its watchdog: before an op the
// loop stores a new odd value (an op is in flight), and while it waits on
// no server (a paced loop's sleep until an op is due, and once the loop is
// over) an even one. It beats before every op of a paced loop or of a
// warm-up, before every op that follows one slower than QuickOp, and
// before every 16th op: quick ops in a row (at most 15, under 16 QuickOp
// in all) share a beat, as an atomic store before each would cost the
// timed loop more than its own bookkeeping. A watchdog gives up only on
// an op in flight whose value has not moved for its timeout and 16
// QuickOp more, so only on an op in flight for at least the timeout. One
// loop at a time writes a Heartbeat; its zero value is ready to use, and
// at rest.
type Heartbeat struct {
	v   atomic.Int64
	seq int64 // the writer's last value, so that beat needs no atomic read
}

// beat says an op starts: the next odd value.
func (h *Heartbeat) beat() {
	h.seq = (h.seq + 1) | 1
	h.v.Store(h.seq)
}

// rest says the loop waits on no server until its next beat.
func (h *Heartbeat) rest() {
	h.seq = (h.seq + 1) &^ 1
	h.v.Store(h.seq)
}

// Watchdog closes a connection whose op in flight has not finished within
// its timeout, so that a hung server fails the blocked op at once instead
// of hanging dbsock. It costs the timed loop a comparison per op and an
// atomic store per slow op or 16 quick ones (the Heartbeat's).
type Watchdog struct {
	fired atomic.Bool
	stop  chan struct{}
	wg    sync.WaitGroup
}

// StartWatchdog watches hb and closes c when an op has been in flight for
// timeout (it checks eight times per timeout, and quick ops share a beat,
// so it fires at most an eighth of timeout and 16 QuickOp late); no
// timeout (0) watches nothing. Stop it with Done.
func StartWatchdog(c io.Closer, hb *Heartbeat, timeout time.Duration) *Watchdog {
	w := &Watchdog{stop: make(chan struct{})}
	if timeout <= 0 {
		return w
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(timeout / 8)
		defer tick.Stop()
		last, since := hb.v.Load(), time.Now()
		for {
			select {
			case <-w.stop:
				return
			case now := <-tick.C:
				if v := hb.v.Load(); v != last || v&1 == 0 {
					last, since = v, now // an op finished, or none is in flight
				} else if now.Sub(since) >= timeout+16*QuickOp {
					w.fired.Store(true)
					c.Close()
					return
				}
			}
		}
	}()
	return w
}

// Fired says whether the watchdog gave up on the connection.
func (w *Watchdog) Fired() bool { return w.fired.Load() }

// Done stops the watchdog and reports whether it fired.
func (w *Watchdog) Done() bool {
	close(w.stop)
	w.wg.Wait()
	return w.fired.Load()
}
