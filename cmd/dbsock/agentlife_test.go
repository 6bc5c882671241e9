package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
)

// agentScript writes an agent of the test's own in Python, body after
// its hello, with m the request read and say(dict) its answer, and
// returns its path.
func agentScript(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "agent.py")
	if err := os.WriteFile(file, []byte(agentHead+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return file
}

// agentHead says hello and answers overhead requests; the body handles
// the rest.
const agentHead = `#!/usr/bin/python3
import json, os, subprocess, sys, time
def say(m):
    print(json.dumps(m), flush=True)
say({"type": "hello", "protocol": 1, "language": "py", "runtime_version": "0", "library": "test", "library_version": "0"})
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "overhead":
        say({"type": "overhead_result", "ns": [5] * m["n"]})
        continue
`

// TestAgentHungAtOpen: an agent that says hello and never answers its
// open is named as the one that hung, not the server.
func TestAgentHungAtOpen(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	script := agentScript(t, "    time.sleep(600)\n")
	start := time.Now()
	code, _, stderr := dbsock(t, "run", "redis", "--clients", "cmd:"+script, "--provider", "local",
		"--paths", "unix,tcp", "--n", "100", "--instances", "1", "--warmup", "10", "--op-timeout", "1s")
	if code != 1 || !strings.Contains(stderr, "the cmd agent") || !strings.Contains(stderr, "it hung: no answer to open") {
		t.Errorf("exit %d, stderr %q: want exit 1 and the agent named as hung at its open", code, stderr)
	}
	if strings.Contains(stderr, "did not answer within") {
		t.Errorf("the server is blamed for the agent's silence: %q", stderr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the error took %s", took) // a bound on a hang, not a timing check
	}
}

// TestCleanEndsLeftoverAgents: dbsock clean lists (--dry-run) and ends an
// agent's process whose run is over (its keeper was killed outright), and
// leaves a live run's alone.
func TestCleanEndsLeftoverAgents(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := supply.Self()
	dead.PID, dead.Start = gone.Process.Pid, dead.Start+1
	start := func(owner supply.Owner) *exec.Cmd {
		c := exec.Command("sleep", "600")
		c.Env = []string{agents.MarkEnv + "=" + owner.String()}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	left, live := start(dead), start(supply.Self())
	want := fmt.Sprintf("agent process %d (sleep 600; its run is over: dbsock pid %d is gone)", left.Process.Pid, dead.PID)
	code, stdout, stderr := dbsock(t, "clean", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "would end "+want) {
		t.Fatalf("clean --dry-run: exit %d, %s%s: want it to list %q", code, stdout, stderr, want)
	}
	if strings.Contains(stdout, strconv.Itoa(live.Process.Pid)) {
		t.Errorf("clean --dry-run lists the live run's agent %d: %s", live.Process.Pid, stdout)
	}
	code, stdout, stderr = dbsock(t, "clean")
	if code != 0 || !strings.Contains(stdout, "ended "+want) {
		t.Fatalf("clean: exit %d, %s%s: want it to end %q", code, stdout, stderr, want)
	}
	if err := left.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the leftover agent ended with %v, want killed", err)
	}
	if err := live.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the live run's agent was ended too: %v", err)
	}
}

// TestAgentEndsBadlyAfterItsWork: an agent that does its work and then
// does not exit when its stdin closes (linger), or exits leaving a
// process that holds its stderr (holder), is ended; the run keeps its
// results and exits 0, with a warning for the first in the run's words.
func TestAgentEndsBadlyAfterItsWork(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	agent, err := filepath.Abs("../../agents/python/agent.py")
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "wrapper.py")
	if err := os.WriteFile(wrapper, []byte(`import subprocess, sys, time
mode, target = sys.argv[1], sys.argv[2]
p = subprocess.Popen([sys.executable, "`+agent+`", target], stdin=subprocess.PIPE, stdout=sys.stdout)
for line in sys.stdin.buffer:
    p.stdin.write(line)
    p.stdin.flush()
p.stdin.close()
p.wait()
if mode == "linger":
    time.sleep(600)
subprocess.Popen(["sleep", "600"], start_new_session=True)  # holds stderr
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, warn string }{
		{"linger", "warning: the cmd agent did not exit within 2s of dbsock closing its stdin (the end of its work): dbsock ended it; its results stand"},
		{"holder", ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			code, stdout, stderr := dbsock(t, "run", "redis", "--clients", "cmd:/usr/bin/python3 "+wrapper+" "+tc.mode, "--provider", "local",
				"--paths", "unix,tcp", "--n", "100", "--instances", "1", "--warmup", "10", "--format", "json")
			if code != 0 || !strings.Contains(stdout, `"transport_verified": true`) {
				t.Fatalf("exit %d, stderr %q: want exit 0 and the runs", code, stderr)
			}
			if tc.warn != "" && (!strings.Contains(stderr, tc.warn) || !strings.Contains(stdout, "did not exit within 2s")) {
				t.Errorf("stderr %q: want the warning %q, in the report too", stderr, tc.warn)
			}
			if strings.Contains(stderr, "WaitDelay") {
				t.Errorf("stderr %q speaks of Go's WaitDelay", stderr)
			}
			if out, _ := exec.Command("pgrep", "-f", wrapper).Output(); len(out) > 0 {
				t.Errorf("left running: %s", out)
			}
		})
	}
}
