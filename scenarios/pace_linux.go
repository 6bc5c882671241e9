package scenarios

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// pacer waits for a paced op's due time (Loop's open loop) without
// spinning on a CPU a server may need: the loop's goroutine keeps its OS
// thread, whose timer slack is lowered to paceSlack, and sleeps in
// nanosleep until the op is due. Go's own timers wake up to a millisecond
// late here (the runtime's poller waits in whole milliseconds), and
// Linux's default slack for a sleeping thread is 50 µs; with 1 µs of
// slack a 200 µs nanosleep woke up a median of 18 µs late on a 2-vCPU
// AMD EPYC (docs/method.md), against pgbench --rate's 85 µs average
// schedule lag there.
type pacer struct{ slack int }

// paceSlack is the timer slack of a pacing thread.
const paceSlack = 1000 // ns

// maxSleep bounds one sleep, so that a cancelled run is seen soon.
const maxSleep = 10 * time.Millisecond

// newPacer locks the calling goroutine to its thread and lowers the
// thread's timer slack; stop restores both.
func newPacer() *pacer {
	runtime.LockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		old = -1
	}
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, paceSlack, 0, 0, 0)
	return &pacer{slack: old}
}

func (p *pacer) stop() {
	if p.slack > 0 {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(p.slack), 0, 0, 0)
	}
	runtime.UnlockOSThread()
}

// waitUntil returns at t (or as soon after as the thread wakes). A
// cancelled ctx cuts the wait short (its error is returned).
func (p *pacer) waitUntil(ctx context.Context, t time.Time) error {
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ts := unix.NsecToTimespec(int64(min(d, maxSleep)))
		_ = unix.Nanosleep(&ts, nil) // EINTR (the runtime's preemption signal): the loop sleeps again
	}
}
