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

// watchdog closes c when heartbeat has not moved for timeout: a hung server
// then fails the blocked op at once instead of hanging dbsock. It costs the
// timed loop nothing but the heartbeat it bumps every 16 ops.
type watchdog struct {
	fired atomic.Bool
	stop  chan struct{}
	wg    sync.WaitGroup
}

func startWatchdog(c io.Closer, heartbeat *atomic.Int64, timeout time.Duration) *watchdog {
	w := &watchdog{stop: make(chan struct{})}
	if timeout <= 0 {
		return w
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(timeout / 8) // it fires at most a quarter of timeout late
		defer tick.Stop()
		last, since := heartbeat.Load(), time.Now()
		for {
			select {
			case <-w.stop:
				return
			case now := <-tick.C:
				if v := heartbeat.Load(); v != last {
					last, since = v, now
				} else if now.Sub(since) >= timeout {
					w.fired.Store(true)
					c.Close()
					return
				}
			}
		}
	}()
	return w
}

// done stops the watchdog and reports whether it fired.
func (w *watchdog) done() bool {
	close(w.stop)
	w.wg.Wait()
	return w.fired.Load()
}
