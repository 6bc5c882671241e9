package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestFloorFromClientStacks: dbsock run floor --clients go,c,python,ruby,java
// measures the kernel floor from each stack over tcp and unix, every
// agent connection verified by the floor server itself (the connection
// that said hello with its token, found over dbsock's own connection)
// before any of its ops was timed.
func TestFloorFromClientStacks(t *testing.T) {
	needStacks(t)
	rep, _ := runClients(t, "run", "floor", "--clients", "go,c,python,ruby,java", "--provider", "local", "--paths", "tcp,unix",
		"--format", "json", "--n", "300", "--instances", "1", "--warmup", "100")
	checkClientRuns(t, rep)
	libraries := map[string]string{}
	for _, s := range rep.Summary {
		if s.Client != nil {
			libraries[s.Stack] = s.Client.Library
		}
		if len(s.Comparisons) != 1 {
			t.Errorf("floor from %q: %d comparisons", s.Stack, len(s.Comparisons))
		}
	}
	if len(rep.Summary) != 5 || libraries["c"] != "libc" || libraries["python"] != "socket" || libraries["ruby"] != "socket" || libraries["java"] != "socketchannel" {
		t.Errorf("%d cases, libraries %v; want floor from go, c (libc), python and ruby (socket), java (socketchannel)", len(rep.Summary), libraries)
	}
	agentRuns := 0
	for _, r := range rep.Runs {
		if r.Stack == "" {
			continue
		}
		agentRuns++
		if !strings.Contains(r.Evidence, "floor server sees connection") || !strings.Contains(r.Evidence, "with the token on "+r.Transport) {
			t.Errorf("floor from %s over %s: evidence %q, want the floor server's own record of the connection", r.Stack, r.Transport, r.Evidence)
		}
	}
	if agentRuns < 8 {
		t.Errorf("%d agent runs, want c's, python's, ruby's and java's on tcp and unix", agentRuns)
	}
}

// TestFloorAgentThatLies: an agent asked for TCP to the floor server that
// opens the socket instead is stopped before any op is timed, with the
// floor server's word on where its connection is.
func TestFloorAgentThatLies(t *testing.T) {
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/unruly.py")
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := dbsock(t, "run", "floor", "--clients", "cmd:/usr/bin/python3 "+script+" lie", "--provider", "local",
		"--paths", "unix,tcp", "--n", "100", "--instances", "1", "--warmup", "10", "--op-timeout", "1s")
	want := "was to be on tcp (127.0.0.1:"
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "floor server sees connection") || !strings.Contains(stderr, "on unix") {
		t.Errorf("exit %d, stderr %q: want exit 1 and an error saying %q with the floor server's record (on unix)", code, stderr, want)
	}
}

// TestFloorExplainPerStack: --explain with --clients measures the floor
// from each stack too and splits each stack's case on its own: the kernel
// floor from C, the stack's client above it, the server's work.
func TestFloorExplainPerStack(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	code, out, stderr := dbsock(t, "run", "redis", "--explain", "--clients", "go,c", "--provider", "local", "--paths", "tcp,unix",
		"--n", "200", "--instances", "1", "--warmup", "50")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"| target and client | transport | kernel floor | + the stack's client |",
		"| redis from go | TCP |", "| redis from c | TCP |", "| redis from go | Unix |", "| redis from c | Unix |"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the report's decomposition", want)
		}
	}
	// Redis reports its own execution time (commandstats): for the agent's
	// lookups as for Go's.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| redis from ") && strings.HasSuffix(line, "| not reported |") {
			t.Errorf("the server's own execution time is not reported on %q", line)
		}
	}
}
