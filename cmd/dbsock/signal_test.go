package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/results"
)

// buildDbsock compiles the command for tests that must run it as a process.
func buildDbsock(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dbsock")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// processesUsing lists live processes whose command line mentions s.
func processesUsing(t *testing.T, s string) []string {
	t.Helper()
	var found []string
	matches, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err == nil && strings.Contains(string(b), s) {
			found = append(found, m+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestSIGINTStopsCleanly interrupts a real run mid-measurement and checks
// that dbsock exits 1, writes the partial report with the interrupted run
// marked incomplete, and leaves no server process and no temp dir.
func TestSIGINTStopsCleanly(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	bin := buildDbsock(t)
	tmp := shortTempDir(t)
	out := filepath.Join(t.TempDir(), "partial.json")
	cmd, sc := startDbsock(t, bin, tmp, "run", "echo", "redis", "--provider", "local", "--n", "100000000", "--instances", "1", "--rounds", "1", "--format", "json", "--out", out)
	seen := waitForLine(sc, "dbsock: echo: ") // the echo server is up
	seen = append(seen, waitForLine(sc, "rows seeded, measuring")...)
	if len(testutil.TempDirs(t, tmp)) == 0 {
		t.Fatalf("no temp dir while the server runs; stderr so far: %q", seen)
	}
	time.Sleep(time.Second) // let warm-up end and the timed blocks run a little, even on a busy machine
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	var err error
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("dbsock did not stop within 15 s of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitFailed {
		t.Fatalf("exit status %d (%v), want %d; stderr: %q", code, err, ExitFailed, seen)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("no partial report: %v", err)
	}
	defer f.Close()
	rep, err := results.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if ops := incompleteOps(rep, rep.Runs[0].Target); ops == 0 {
		t.Fatalf("want the interrupted round kept with its ops and marked incomplete; runs: %+v", rep.Runs)
	}
	if len(rep.Targets) != 2 || !strings.Contains(rep.Targets[1].Error, "not run: interrupted") {
		t.Fatalf("want redis marked not run; targets: %+v", rep.Targets)
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Errorf("temp dirs left: %v", left)
	}
	if procs := processesUsing(t, tmp); len(procs) != 0 {
		t.Errorf("processes left: %v", procs)
	}
}

// TestClosedPipeStopsCleanly closes the pipe dbsock writes its progress
// to, as "dbsock run ... 2>&1 | head -3" does: dbsock stops as on Ctrl-C
// and removes its servers and temp dir, instead of dying at its next write.
func TestClosedPipeStopsCleanly(t *testing.T) {
	bin := buildDbsock(t)
	tmp := shortTempDir(t)
	cmd := exec.Command(bin, "run", "echo", "--provider", "local", "--n", "2000", "--warmup", "10", "--instances", "100", "--rounds", "1", "--format", "json")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr, cmd.Stdout = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(r)
	waitForLine(sc, "server instance 2 of 100") // measuring, and writing a line per instance
	if len(testutil.TempDirs(t, tmp)) == 0 {
		t.Fatal("no temp dir while the server runs")
	}
	r.Close() // the reader goes away
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("dbsock did not stop within 15 s of its reader going away")
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		t.Fatalf("dbsock died of %v instead of stopping", st.Signal())
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Errorf("temp dirs left: %v", left)
	}
	if procs := processesUsing(t, tmp); len(procs) != 0 {
		t.Errorf("processes left: %v", procs)
	}
}

// TestCleanAfterSIGKILL kills dbsock outright while it measures: its server
// dies with it (Pdeathsig), and "dbsock clean" removes the temp dir it could
// not remove itself.
func TestCleanAfterSIGKILL(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	bin := buildDbsock(t)
	tmp := shortTempDir(t)
	cmd, sc := startDbsock(t, bin, tmp, "run", "redis", "--provider", "local", "--n", "100000000", "--instances", "1", "--rounds", "1")
	// Killed once the agent has said hello (its temp dir is then its
	// keeper's to remove): killed while the agent starts, a temp dir
	// dbsock made for it is left to dbsock clean with the run's own.
	waitForLine(sc, "ns per op to time it")
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for (len(processesUsing(t, tmp)) > 0 || len(testutil.TempDirs(t, tmp)) > 1) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // Pdeathsig is asynchronous, and so is the agent's keeper, which removes the agent's temp dir
	}
	if len(testutil.TempDirs(t, tmp)) != 1 {
		t.Fatalf("want the killed run's temp dir left behind, and no agent's, found %v", testutil.TempDirs(t, tmp))
	}
	if procs := processesUsing(t, tmp); len(procs) != 0 {
		t.Fatalf("servers outlived a SIGKILLed dbsock: %v", procs)
	}
	clean := exec.Command(bin, "clean")
	clean.Env = cmd.Env
	out, err := clean.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed "+tmp) {
		t.Fatalf("dbsock clean: %v\n%s", err, out)
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Fatalf("dbsock clean left %v", left)
	}
}
