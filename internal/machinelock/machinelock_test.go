package machinelock

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv makes this test binary a process that measures: it takes the
// lock, holds it for the value's duration, and prints the interval it held
// it over (Unix ns).
const helperEnv = "MACHINELOCK_TEST_HOLD"

func TestHelperProcess(t *testing.T) {
	hold, err := time.ParseDuration(os.Getenv(helperEnv))
	if err != nil {
		t.Skip("run by the tests below as a process of its own")
	}
	times, _ := strconv.Atoi(os.Getenv(timesEnv))
	for range max(times, 1) { // measurements one after another, as a test binary's tests
		release, err := Acquire(context.Background(), os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		start := time.Now()
		time.Sleep(hold)
		end := time.Now()
		release()
		fmt.Printf("%d %d\n", start.UnixNano(), end.UnixNano())
	}
}

// timesEnv is how many times the helper measures, one after another.
const timesEnv = "MACHINELOCK_TEST_TIMES"

// measurer is a process that measures for hold under lock.
type measurer struct {
	cmd            *exec.Cmd
	stdout, stderr strings.Builder
}

func startMeasurer(t *testing.T, lock string, hold time.Duration) *measurer {
	t.Helper()
	m := &measurer{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")}
	m.cmd.Env = append(os.Environ(), helperEnv+"="+hold.String(), Env+"="+lock)
	m.cmd.Stdout, m.cmd.Stderr = &m.stdout, &m.stderr
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return m
}

// interval is when m held the lock.
func (m *measurer) interval(t *testing.T) (start, end int64) {
	t.Helper()
	if err := m.cmd.Wait(); err != nil {
		t.Fatalf("pid %d: %v; stderr: %s", m.cmd.Process.Pid, err, m.stderr.String())
	}
	line := strings.Fields(m.stdout.String())
	if len(line) < 2 {
		t.Fatalf("pid %d printed no interval: %q", m.cmd.Process.Pid, m.stdout.String())
	}
	start, _ = strconv.ParseInt(line[0], 10, 64)
	end, _ = strconv.ParseInt(line[1], 10, 64)
	return start, end
}

// Two processes that measure at once on one machine take turns, and the one
// that waits says which process it waits for.
func TestTwoProcessesDoNotOverlap(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "measuring.lock")
	a := startMeasurer(t, lock, 500*time.Millisecond)
	b := startMeasurer(t, lock, 500*time.Millisecond)
	as, ae := a.interval(t)
	bs, be := b.interval(t)
	if as < be && bs < ae {
		t.Fatalf("the two measured at once: pid %d over [%d, %d], pid %d over [%d, %d] (ns)", a.cmd.Process.Pid, as, ae, b.cmd.Process.Pid, bs, be)
	}
	waiter, holder := a, b
	if as < bs {
		waiter, holder = b, a
	}
	want := fmt.Sprintf("another measurement is running on this machine (pid %d, ", holder.cmd.Process.Pid)
	if !strings.Contains(waiter.stderr.String(), want) || !strings.Contains(waiter.stderr.String(), "TestHelperProcess") {
		t.Errorf("the process that waited (pid %d) said %q, want the pid and command of the one it waited for (%q)", waiter.cmd.Process.Pid, waiter.stderr.String(), want)
	}
}

// A measurement that waits longer than the bound is refused, naming the
// other; one whose context ends stops waiting; "off" locks nothing.
func TestWaitIsBounded(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "measuring.lock")
	t.Setenv(Env, lock)
	holder := startMeasurer(t, lock, 1500*time.Millisecond)
	defer holder.cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(read(lock), `"pid"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the holder never took the lock; stderr: %s", holder.stderr.String())
		}
	}
	defer func(w time.Duration) { maxWait = w }(maxWait)
	maxWait = 200 * time.Millisecond
	var log strings.Builder
	_, err := Acquire(context.Background(), &log)
	pid := fmt.Sprintf("pid %d", holder.cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), pid) || !strings.Contains(err.Error(), "still held") {
		t.Errorf("error %v, want a refusal naming %s", err, pid)
	}
	if !strings.Contains(log.String(), pid) || !strings.Contains(log.String(), "at most 200ms") {
		t.Errorf("logged %q, want the holder and the bound", log.String())
	}

	maxWait = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, &log); err == nil || !strings.Contains(err.Error(), pid) {
		t.Errorf("with a context that ends: %v, want an error naming %s", err, pid)
	}

	t.Setenv(Env, "off")
	release, err := Acquire(context.Background(), &log)
	if err != nil {
		t.Fatalf("with %s=off: %v", Env, err)
	}
	release()
}

// A process that waits while another measures many times, one after
// another, says once which process it waits for.
func TestWaitSaysOncePerProcess(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "measuring.lock")
	t.Setenv(Env, lock)
	t.Setenv(timesEnv, "6")
	holder := startMeasurer(t, lock, 100*time.Millisecond)
	defer holder.cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(read(lock), `"pid"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the holder never took the lock; stderr: %s", holder.stderr.String())
		}
	}
	var log strings.Builder
	release, err := Acquire(context.Background(), &log)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if n := strings.Count(log.String(), "another measurement is running"); n != 1 {
		t.Errorf("said %d times which process it waits for, want once:\n%s", n, log.String())
	}
}

func read(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// The default lock file is one for the whole machine: in /tmp, whatever
// TMPDIR says, and a symlink in its place is not followed.
func TestPath(t *testing.T) {
	t.Setenv(Env, "")
	t.Setenv("TMPDIR", t.TempDir())
	if p := Path(); !strings.HasPrefix(p, "/tmp/dbsock-measuring-") {
		t.Errorf("Path() = %s, want a file in /tmp", p)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "lock")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Fatal(err)
	}
	t.Setenv(Env, link)
	if _, err := Acquire(context.Background(), nil); err == nil {
		t.Error("a symlinked lock file was followed")
	}
	if _, err := os.Stat(filepath.Join(dir, "target")); err == nil {
		t.Error("the symlink's target was created")
	}
}
