package all_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

// lines is a log that says when a line containing want was written.
type lines struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if strings.Contains(l.buf.String(), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

// TestHungServerEndsTheRun stops (SIGSTOP) each database's server while
// dbsock measures it: the op in flight must fail within --op-timeout plus
// a little (the watchdog closes the socket under the client library,
// whose own Close would wait for the op), and the run ends with an error
// that says the server did not answer. Paced (--rate), the loop does not
// wait out its schedule on the closed connection either.
func TestHungServerEndsTheRun(t *testing.T) {
	const opTimeout = time.Second
	for _, tt := range []struct {
		target, binary string
		rate           float64
	}{
		{"mysql", "mariadbd", 0}, {"postgres", "initdb", 0}, {"redis", "redis-server", 0}, {"memcached", "memcached", 0}, {"mongo", "ferretdb", 0}, {"pgbouncer", "pgbouncer", 0},
		{"redis", "redis-server", 1000},
	} {
		name := tt.target
		if tt.rate > 0 {
			name += fmt.Sprintf(" at %g ops per second", tt.rate)
		}
		t.Run(name, func(t *testing.T) {
			srv := targettest.Local(t, tt.target, tt.binary)
			tg, _ := targets.Lookup(tt.target)
			place, _ := placement.Resolve("none", "", "")
			log := &lines{want: "round 1", seen: make(chan struct{})}
			plan := pipeline.Plan{Targets: []*targets.Target{tg}, Provider: targettest.External(tt.target, srv), ProviderName: "external",
				Placement: place, Reach: drivers.Reach, Output: pipeline.Output{Log: log}, Gates: pipeline.Gates{MaxErrorRate: -1},
				// Rounds of 2,000 ops, 1,000 of them: the server is stopped
				// once round 1 is logged, in the middle of round 2.
				Loop: scenarios.Settings{N: 2000, Warmup: 10, Rounds: 1000, Blocks: 1, OpTimeout: opTimeout, Seed: 1, Rate: tt.rate}, Workload: pipeline.Workload{Rows: 100}}
			done := make(chan error, 1)
			go func() { _, err := pipeline.Run(context.Background(), plan); done <- err }()
			select {
			case <-log.seen:
			case err := <-done:
				t.Fatalf("the run ended before the server was stopped: %v", err)
			case <-time.After(time.Minute):
				t.Fatal("the run never got to measuring")
			}
			pids, _ := cpustat.Descendants(srv.PID)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGSTOP)
			}
			defer func() {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGCONT)
				}
			}()
			stopped := time.Now()
			select {
			case err := <-done:
				took := time.Since(stopped)
				if err == nil || !strings.Contains(err.Error(), "did not answer") {
					t.Errorf("error %v, want one saying the server did not answer", err)
				}
				if took > opTimeout+2*time.Second {
					t.Errorf("the run took %s to end after the server stopped, want within --op-timeout %s plus 2s", took.Round(time.Millisecond), opTimeout)
				}
				t.Logf("%s: ended %s after SIGSTOP", tt.target, took.Round(time.Millisecond))
			case <-time.After(opTimeout + 30*time.Second):
				t.Fatalf("the run still hangs %s after the server stopped", opTimeout+30*time.Second)
			}
		})
	}
}

// TestStoppedServerIsStopped: a server whose processes were all stopped
// (SIGSTOP) is still stopped at once, and none of its processes is left,
// PostgreSQL's backends in their own sessions included.
func TestStoppedServerIsStopped(t *testing.T) {
	srv := targettest.Local(t, "postgres", "initdb")
	// Connections make backends: a run's worth.
	pipelinetest.Measure(t, "postgres", targettest.External("postgres", srv), pipelinetest.Loop{Settings: scenarios.Settings{N: 200, Warmup: 10, Rounds: 1, Blocks: 1, Seed: 1}})
	tree, err := cpustat.Descendants(srv.PID)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range tree {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	began := time.Now()
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("stopping a stopped PostgreSQL took %s; it waited out its grace period", took.Round(time.Millisecond))
	}
	// Processes init inherited are reaped a moment later: look again for
	// up to 2 s before calling one left over.
	left := tree
	for deadline := time.Now().Add(2 * time.Second); len(left) > 0 && time.Now().Before(deadline); {
		var still []int
		for _, pid := range left {
			if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
				still = append(still, pid)
			}
		}
		left = still
		if len(left) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if len(left) > 0 {
		t.Errorf("processes %v of the stopped server are still there", left)
	}
}

// zombie says whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}
