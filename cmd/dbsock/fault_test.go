package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/testutil"
)

var pidRE = regexp.MustCompile(`redis-server \(pid (\d+)\)`)

// TestServerKilledMidRun kills the real Redis server while dbsock measures
// it: dbsock must stop that target with a clear error, keep the ops it
// measured (marked incomplete), go on with the next target, exit 1, and
// leave nothing behind.
func TestServerKilledMidRun(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	bin := buildDbsock(t)
	tmp := shortTempDir(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd, sc := startDbsock(t, bin, tmp, "run", "redis", "echo", "--provider", "local", "--n", "50000000", "--instances", "1", "--rounds", "1", "--format", "json", "--out", out)
	var lines []string
	pid := 0
	for pid == 0 && sc.Scan() {
		lines = append(lines, sc.Text())
		if m := pidRE.FindStringSubmatch(sc.Text()); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
	}
	if pid == 0 {
		t.Fatalf("no redis-server pid in stderr: %q", lines)
	}
	// Measuring by now: the server has spent 200 ms of CPU, far more than
	// seeding and the warm-up cost it (a fixed sleep was not enough on a
	// slow machine, where seeding and settling took longer).
	for deadline := time.Now().Add(30 * time.Second); procCPUTicks(t, pid) < 20; { // 1/100 s ticks
		if time.Now().After(deadline) {
			t.Fatalf("redis (pid %d) spent under 200 ms of CPU in 30 s: dbsock is not measuring it", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest := make(chan string)
	go func() {
		for sc.Scan() {
			rest <- sc.Text()
		}
		close(rest)
	}()
	// echo then runs its full 50M ops: stop it once the redis failure is in.
	timeout := time.After(20 * time.Second)
	for moved := false; !moved; {
		select {
		case line, ok := <-rest:
			if !ok {
				t.Fatalf("dbsock ended before moving on to echo; stderr: %q", lines)
			}
			lines = append(lines, line)
			moved = strings.Contains(line, "dbsock: echo: ")
		case <-timeout:
			t.Fatalf("dbsock did not move on to echo after redis died; stderr: %q", lines)
		}
	}
	go func() {
		for range rest {
		}
	}()
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitFailed {
		t.Fatalf("exit %d (%v), want %d", code, err, ExitFailed)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	if ops := incompleteOps(rep, "redis"); ops == 0 {
		t.Fatalf("want the killed redis round kept with its ops and marked incomplete: %+v", rep.Runs)
	}
	if e := rep.Targets[0].Error; !strings.Contains(e, "redis over ") || !strings.Contains(e, "stopped after") || !strings.Contains(e, "went away") {
		t.Errorf("redis error %q does not say what happened", rep.Targets[0].Error)
	}
	if len(rep.Targets) < 2 || rep.Targets[1].Name != "echo" {
		t.Fatalf("dbsock did not go on with echo: %+v", rep.Targets)
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Errorf("temp dirs left: %v", left)
	}
	if procs := processesUsing(t, tmp); len(procs) != 0 {
		t.Errorf("processes left: %v", procs)
	}
}
