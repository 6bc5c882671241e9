package sysinfo

import (
	"errors"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Wake-ups: what it costs one thread to wake another and be woken back, a
// byte over a pair of pipes, with both threads pinned to one CPU (two
// context switches a round trip) or to two (a wake-up across CPUs, an
// inter-processor interrupt where the other CPU sleeps: a VM exit in a
// guest). A client and a server take these turns on every op, on every
// path alike.

const (
	wakeBatches = 5   // batches of round trips timed
	wakeBatch   = 100 // round trips a batch
)

// wakeCosts measures a round trip on one CPU and across two, in ns (0
// where it could not be measured: one CPU allowed, pinning refused).
func wakeCosts() (same, cross float64) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, 0
	}
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < 2; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return 0, 0
	}
	same, _ = wakeRoundTrip(cpus[0], cpus[0])
	if len(cpus) > 1 {
		cross, _ = wakeRoundTrip(cpus[0], cpus[1])
	}
	return same, cross
}

// wakeRoundTrip times round trips between a thread on CPU a and one on
// CPU b: the least over batches of a batch's mean, in ns. Each thread is
// locked to its goroutine while pinned, and given back unpinned (onThread):
// never ended, since a child process started from a thread (a server,
// with its parent-death signal) is killed when that thread ends. Closing a
// pipe's write end ends the other side.
func wakeRoundTrip(a, b int) (float64, error) {
	var ping, pong [2]int
	if err := unix.Pipe2(ping[:], unix.O_CLOEXEC); err != nil {
		return 0, err
	}
	if err := unix.Pipe2(pong[:], unix.O_CLOEXEC); err != nil {
		unix.Close(ping[0])
		unix.Close(ping[1])
		return 0, err
	}
	pinned := make(chan error, 1)
	echoBack := goOnThread(func() { // the echo: ends when ping's write end closes
		defer unix.Close(ping[0])
		defer unix.Close(pong[1])
		err := pinThread(b)
		pinned <- err
		for err == nil && oneByte(unix.Read, ping[0]) == nil && oneByte(unix.Write, pong[1]) == nil {
		}
	})
	if err := <-pinned; err != nil { // nothing is written to a pipe nobody reads
		unix.Close(ping[1])
		unix.Close(pong[0])
		waitBack(echoBack)
		return 0, err
	}
	done := make(chan float64, 1)
	timerBack := goOnThread(func() {
		defer unix.Close(pong[0])
		defer unix.Close(ping[1])
		best := 0.0
		if pinThread(a) == nil {
			best = timeRoundTrips(ping[1], pong[0])
		}
		done <- best
	})
	ns := <-done
	waitBack(echoBack, timerBack)
	if ns > 0 {
		return ns, nil
	}
	return 0, errors.New("the round trips could not be timed")
}

// goOnThread runs f on a thread of its own (onThread) in a goroutine, and
// returns a channel closed once that thread is given back unpinned (never,
// where it could not be).
func goOnThread(f func()) <-chan struct{} {
	back := make(chan struct{})
	go func() {
		onThread(f)
		close(back)
	}()
	return back
}

// waitBack waits, 2 s at most, until the threads of a measurement are
// given back: a measurement that returned with a thread still pinned let
// the client's pinning record that thread's pinned CPUs as its own, and
// put it back there when the run ended (the process left on one CPU).
func waitBack(backs ...<-chan struct{}) {
	limit := time.After(2 * time.Second)
	for _, b := range backs {
		select {
		case <-b:
		case <-limit:
			return
		}
	}
}

// onThread runs f locked to one OS thread and gives the thread back with
// the CPUs it had before (f may pin it). Where they cannot be restored the
// thread stays locked, pinned, to a goroutine that never ends, rather than
// ending: a thread that ends takes with it the children it started (their
// parent-death signal), and a thread given back pinned would pin whatever
// goroutine ran on it next.
func onThread(f func()) {
	runtime.LockOSThread()
	var before unix.CPUSet
	saved := unix.SchedGetaffinity(0, &before) == nil
	f()
	if saved && unix.SchedSetaffinity(0, &before) == nil {
		runtime.UnlockOSThread()
		return
	}
	select {} // parked for the process's life: one idle thread
}

// timeRoundTrips writes a byte to w and reads one back from r, in
// batches: the least batch mean in ns (0 when one failed).
func timeRoundTrips(w, r int) float64 {
	best := 0.0
	for range wakeBatches {
		start := time.Now()
		for range wakeBatch {
			if oneByte(unix.Write, w) != nil || oneByte(unix.Read, r) != nil {
				return 0
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / wakeBatch
		if best == 0 || ns < best {
			best = ns
		}
	}
	return best
}

// oneByte reads or writes one byte on fd, again when a signal interrupts
// it; an error at the end of the pipe.
func oneByte(op func(int, []byte) (int, error), fd int) error {
	buf := []byte{1}
	for {
		n, err := op(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n != 1 {
			return errors.New("end of the pipe")
		}
		return nil
	}
}

// pinThread pins the calling thread to cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}
