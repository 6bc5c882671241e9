package scenarios

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pacer waits for a paced op's due time (Loop's open loop) without
// spinning on a CPU a server may need, and without holding an OS thread:
// each loop has a timerfd of its own (CLOCK_MONOTONIC, non-blocking,
// registered with Go's network poller), armed for the op's due time, and
// the loop's goroutine parks reading it until it fires. A timerfd's timer
// fires when it is due (no timer slack: that applies to a sleeping
// thread's own timeouts), and the poller wakes the goroutine at once;
// Go's own timers wake up to a millisecond late here (the runtime's poller
// waits in whole milliseconds), and a thread sleeping in nanosleep must
// hand its goroutine back to the scheduler on every op (measured, with
// the figures: docs/workload.md).
type pacer struct {
	f   *os.File // nil: the timerfd could not be made; the loop's timer instead
	buf [8]byte
	t   *time.Timer
}

// maxSleep bounds one wait, so that a cancelled run is seen soon.
const maxSleep = 10 * time.Millisecond

// newPacer makes the loop's timerfd; stop closes it.
func newPacer() *pacer {
	p := &pacer{t: time.NewTimer(time.Hour)}
	p.t.Stop()
	if fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err == nil {
		p.f = os.NewFile(uintptr(fd), "timerfd")
	}
	return p
}

func (p *pacer) stop() {
	p.t.Stop()
	if p.f != nil {
		p.f.Close()
	}
}

// waitUntil returns at t (or as soon after as the goroutine runs). A
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
		d = min(d, maxSleep)
		if p.f == nil {
			p.t.Reset(d)
			<-p.t.C
			continue
		}
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
		if err := unix.TimerfdSettime(int(p.f.Fd()), 0, &spec, nil); err != nil {
			p.f.Close()
			p.f = nil
			continue
		}
		_, _ = p.f.Read(p.buf[:]) // 8 bytes: how many times it fired
	}
}
