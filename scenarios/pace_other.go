//go:build !linux

package scenarios

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// pacer waits for a paced op's due time (Loop's open loop). Outside Linux
// it sleeps on the loop's timer while the due time is further away than
// the timer's slack, and spins the last stretch, yielding between clock
// reads; on Linux it sleeps precisely instead (pace_linux.go).
type pacer struct{ timer *time.Timer }

// newPacer is the loop's pacer; stop releases it.
func newPacer() *pacer {
	sleepSlack() // calibrate before the clock starts
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pacer{timer: t}
}

func (p *pacer) stop() { p.timer.Stop() }

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

// waitUntil returns at t. A cancelled ctx cuts the sleep short (its error
// is returned).
func (p *pacer) waitUntil(ctx context.Context, t time.Time) error {
	if wait, slack := time.Until(t), sleepSlack(); wait > slack {
		p.timer.Reset(wait - slack)
		select {
		case <-ctx.Done():
			p.timer.Stop()
			return ctx.Err()
		case <-p.timer.C:
		}
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
	return nil
}
