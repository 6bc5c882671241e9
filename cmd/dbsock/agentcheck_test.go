package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/internal/testutil"
)

// TestAgentCheck: dbsock agent-check on the docs' example agent, against
// a real local Redis it starts, prints one line per check of the suite,
// in order, each passed or not run, and exits 0; on an agent that answers
// garbage, FAIL lines that say so, and exit 1.
func TestAgentCheck(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	code, stdout, stderr := dbsock(t, "agent-check", "--clients", "cmd:/usr/bin/python3 "+docAgent(t), "redis")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	checks := agents.Checks()
	if code != ExitOK || len(lines) != len(checks) {
		t.Fatalf("the docs' agent: exit %d, %d lines for %d checks:\n%s\nstderr: %s", code, len(lines), len(checks), stdout, stderr)
	}
	for i, c := range checks {
		pass, skip := "PASS redis from cmd: "+c.Name, "SKIP redis from cmd: "+c.Name
		if !strings.HasPrefix(lines[i], pass) && !strings.HasPrefix(lines[i], skip) {
			t.Errorf("line %d: %q; want the check %s passed or not run", i+1, lines[i], c.Name)
		}
	}
	if !strings.Contains(stderr, "dbsock: agent-check: 13 passed, 0 failed, 3 not run") {
		t.Errorf("stderr %q; want the count of checks passed, failed and not run", stderr)
	}
	broken := filepath.Join(t.TempDir(), "broken.sh")
	if err := os.WriteFile(broken, []byte(`echo '{"type":"hello","protocol":1,"language":"sh","runtime_version":"1","library":"none","library_version":"0"}'
while read -r line; do echo 'not an answer'; done
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = dbsock(t, "agent-check", "--clients", "cmd:/bin/sh "+broken, "redis")
	if code != ExitFailed || !strings.Contains(stdout, "PASS redis from cmd: hello: ") ||
		!strings.Contains(stdout, `FAIL redis from cmd: open tcp: the cmd agent (/bin/sh `+broken+` redis): it answered garbage as its answer to open s1-tcp`) {
		t.Errorf("a broken agent: exit %d, stdout:\n%s", code, stdout)
	}
	if !strings.HasSuffix(stderr, "checks failed (their FAIL lines say what it did; docs/agents.md, \"Checking an agent\")\n") {
		t.Errorf("a broken agent's stderr %q", stderr)
	}
}

// TestAgentCheckOfGoAgent: dbsock's own Go agent (this binary's agent
// command, as a user's cmd: agent), given no target, is checked on the
// target its hello's protocol family names (protocol 2), and passes.
func TestAgentCheckOfGoAgent(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := dbsock(t, "agent-check", "--clients", "cmd:"+exe+" agent")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != ExitOK || len(lines) != len(agents.Checks()) || strings.Contains(stdout, "FAIL") {
		t.Fatalf("the Go agent: exit %d:\n%s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"PASS mysql from cmd: hello: github.com/go-sql-driver/mysql", "PASS mysql from cmd: load: ", "PASS mysql from cmd: connect: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no line %q in:\n%s", want, stdout)
		}
	}
}

// TestAgentCheckRefusesBadInput: what dbsock agent-check cannot check
// is refused before any server starts, with exit 2 and one line.
func TestAgentCheckRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the agent to check: --clients cmd:'COMMAND'"},
		{[]string{"--clients", "cobol"}, `--clients "cobol" is not a client stack`},
		{[]string{"--clients", "go", "redis"}, `its agent is checked as your own is, --clients cmd:'dbsock agent'`},
		{[]string{"--clients", "cmd:/nonexistent/agent", "redis"}, `--clients "cmd:/nonexistent/agent" cannot be run: /nonexistent/agent cannot be run`},
		{[]string{"--clients", "cmd:/bin/true", "rediss"}, `unknown target "rediss" (did you mean redis?)`},
		{[]string{"--clients", "cmd:/bin/true", "mongo"}, "no agent is checked on mongo"},
		{[]string{"--clients", "java", "redis"}, "the java agent has no client library for redis"},
		{[]string{"--clients", "python:nosuch"}, `the python stack's stack.json claims no target with library "nosuch"`},
	} {
		code, stdout, stderr := dbsock(t, append([]string{"agent-check"}, tc.args...)...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("agent-check %q: exit %d, stdout %q, stderr %q; want 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	needStacks(t)
	code, _, stderr := dbsock(t, "agent-check", "--clients", "cmd:/usr/bin/python3 "+docAgent(t))
	if code != ExitUsage || !strings.Contains(stderr, "its hello speaks protocol 1, which does not say which targets it measures: name them") {
		t.Errorf("a protocol 1 agent with no target: exit %d, %q", code, stderr)
	}
}
