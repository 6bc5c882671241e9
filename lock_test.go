package dbsock_test

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

	"github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockredis"
	"github.com/dbsock/dbsock/dbsocktest"
	"github.com/dbsock/dbsock/internal/machinelock"
)

// measureEnv makes this test binary a go test process of a user's that
// measures: it starts its own Redis, waits until the other process is
// ready too (the directory the value names holds a file per ready
// process), runs Compare, and prints the interval its report says it
// measured over (Unix ns).
const measureEnv = "DBSOCK_TEST_MEASURE_BARRIER"

func TestMeasuringProcess(t *testing.T) {
	barrier := os.Getenv(measureEnv)
	if barrier == "" {
		t.Skip("run by TestTwoGoTestProcessesMeasureInTurn as a process of its own")
	}
	srv := dbsocktest.Start(t, "redis", dbsock.StartOptions{})
	if err := os.WriteFile(filepath.Join(barrier, strconv.Itoa(os.Getpid())), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if ready, _ := os.ReadDir(barrier); len(ready) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the other process never got its server")
		}
	}
	open := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		c := redis.NewClient(dbsockredis.Options(ep))
		return func(ctx context.Context) error { return c.Ping(ctx).Err() }, c.Close, nil
	}
	rep, err := dbsock.Compare(context.Background(), srv, "ping", open, dbsock.CompareOptions{N: 20000, Warmup: 100, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("measured %d %d\n", rep.StartedAt.UnixNano(), rep.FinishedAt.UnixNano())
}

// TestTwoGoTestProcessesMeasureInTurn: two go test processes (as go test
// ./... runs two packages at once) that call Compare at the same moment
// measure one after the other, and the one that waits says for which
// process.
func TestTwoGoTestProcessesMeasureInTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real server; skipped with -short")
	}
	barrier, lock := t.TempDir(), filepath.Join(t.TempDir(), "measuring.lock")
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr strings.Builder
		start, end     int64
	}
	var procs [2]*proc
	for i := range procs {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^TestMeasuringProcess$", "-test.count=1", "-test.v")}
		// Their own lock file: a test elsewhere on this machine does not
		// come between them.
		p.cmd.Env = append(os.Environ(), measureEnv+"="+barrier, machinelock.Env+"="+lock)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	for _, p := range procs {
		err := p.cmd.Wait()
		out := p.stdout.String()
		if strings.Contains(out, "--- SKIP: TestMeasuringProcess") {
			t.Skipf("no Redis here: %s", out)
		}
		_, after, ok := strings.Cut(out, "measured ")
		if err != nil || !ok {
			t.Fatalf("pid %d: %v\n%s\n%s", p.cmd.Process.Pid, err, out, p.stderr.String())
		}
		fmt.Sscan(after, &p.start, &p.end)
	}
	a, b := procs[0], procs[1]
	if a.start < b.end && b.start < a.end {
		t.Fatalf("the two processes measured at once: pid %d from %s to %s, pid %d from %s to %s",
			a.cmd.Process.Pid, clock(a.start), clock(a.end), b.cmd.Process.Pid, clock(b.start), clock(b.end))
	}
	first, second := a, b
	if b.start < a.start {
		first, second = b, a
	}
	want := fmt.Sprintf("another measurement is running on this machine (pid %d, ", first.cmd.Process.Pid)
	if !strings.Contains(second.stderr.String()+second.stdout.String(), want) {
		t.Errorf("the process that measured second (pid %d) did not say it waited for pid %d: %s", second.cmd.Process.Pid, first.cmd.Process.Pid, second.stderr.String())
	}
	t.Logf("pid %d measured from %s to %s, pid %d from %s to %s", first.cmd.Process.Pid, clock(first.start), clock(first.end),
		second.cmd.Process.Pid, clock(second.start), clock(second.end))
}

func clock(ns int64) string { return time.Unix(0, ns).Format("15:04:05.000") }
