// Package machinelock keeps measurements on one machine from overlapping:
// dbsock run and the library's Compare and dbsocktest.Benchmark pin the
// client where the servers are not and time each op, so two of them at once
// (two terminals, or go test ./... running two packages' tests at once)
// would share the CPUs each one times. Each takes the machine's measuring
// lock, a file every process of every user on the machine opens (flock: the
// kernel drops it when its holder ends, however it ends), and one that finds
// it held waits, saying which process holds it, for at most MaxWait.
package machinelock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Env, set to a file's path, is the lock file to use instead of the
// default (jobs that share a machine's CPUs but not its /tmp, containers
// for instance, point it at a file they all see); set to "off", nothing is
// locked.
const Env = "DBSOCK_MEASURE_LOCK"

// MaxWait is how long Acquire waits for another measurement to end before
// it refuses.
const MaxWait = 10 * time.Minute

// maxWait is MaxWait (a test shortens it); poll is how often a held lock
// is tried again.
var (
	maxWait = MaxWait
	poll    = 50 * time.Millisecond
)

// Holder is who holds the lock, as its holder wrote it in the file.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// String is the holder in one line of visible text: its command quoted.
func (h Holder) String() string {
	if h.PID == 0 {
		return "a process that has not said which it is"
	}
	return fmt.Sprintf("pid %d, %q, measuring since %s", h.PID, h.Command, h.Since.Local().Format("15:04:05"))
}

// Path is the lock file: Env's value, or a file in /tmp (every user's
// temporary directory, where it exists) named for this machine.
func Path() string {
	if p := os.Getenv(Env); p != "" {
		return p
	}
	dir := os.TempDir()
	if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
		dir = "/tmp" // not TMPDIR: one file for every user and shell
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, host)
	return filepath.Join(dir, "dbsock-measuring-"+host+".lock")
}

// Acquire takes the machine's measuring lock for this process, waiting
// while another holds it (saying so on log, or on stderr when log is nil)
// until ctx ends or MaxWait has passed; release gives it back. With Env
// set to "off" it takes nothing.
func Acquire(ctx context.Context, log io.Writer) (release func(), err error) {
	path := Path()
	if path == "off" {
		return func() {}, nil
	}
	if log == nil {
		log = os.Stderr
	}
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the machine's measuring lock %s: %w (set %s to a file you may write, or to off to measure without it)", path, err, Env)
	}
	if err := wait(ctx, f, log); err != nil {
		f.Close()
		return nil, err
	}
	me := Holder{PID: os.Getpid(), Command: strings.Join(os.Args, " "), Since: time.Now()}
	if b, err := json.Marshal(me); err == nil {
		_ = f.Truncate(0)
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// wait takes the lock on f, waiting for its holder to release it.
func wait(ctx context.Context, f *os.File, log io.Writer) error {
	start := time.Now()
	var said Holder
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			if said.PID != 0 {
				fmt.Fprintf(log, "dbsock: the other measurement has ended (waited %s); measuring\n", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("locking the machine's measuring lock %s: %w (set %s to off to measure without it)", f.Name(), err, Env)
		}
		h := holder(f)
		if h.PID != said.PID && h.PID != 0 { // once per process, not per measurement of its
			fmt.Fprintf(log, "dbsock: another measurement is running on this machine (%s); waiting for it to end, at most %s, so that the two do not share the CPUs they time (lock %s)\n",
				h, maxWait, f.Name())
			said = h
		}
		if waited := time.Since(start); waited >= maxWait {
			return fmt.Errorf("another measurement on this machine (%s) still held its measuring lock %s after %s: measure when it has ended, or end it", h, f.Name(), waited.Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for another measurement on this machine (%s) to end: %w", h, context.Cause(ctx))
		case <-time.After(poll):
		}
	}
}

// holder reads who holds the lock from f.
func holder(f *os.File) Holder {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	var h Holder
	_ = json.Unmarshal(b[:n], &h)
	return h
}

// open opens the lock file for reading and writing, creating it for every
// user. It follows no symlink, and opens an existing file without O_CREAT
// (which a sticky /tmp refuses for another user's file).
func open(path string) (*os.File, error) {
	for range 3 {
		f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			if errors.Is(err, os.ErrPermission) {
				return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0) // flock needs no write
			}
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
		if err == nil {
			_ = f.Chmod(0o666) // whatever the umask: every user measures under it
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("it was created and removed under us three times")
}
