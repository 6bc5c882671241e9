package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
)

// limits are short, so that a hung agent is caught within two seconds (the grace lets an interpreter start on a busy machine).
var limits = agents.Limits{OpTimeout: 200 * time.Millisecond, Grace: 1500 * time.Millisecond, PerOp: time.Millisecond, Hello: 2 * time.Second}

func fake(t *testing.T, mode string) (*agents.Agent, error) {
	t.Helper()
	return agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"testdata/fake.sh", mode}}, limits)
}

func block(keys int) agents.Block {
	b := agents.Block{ID: "c1", ValueLength: 6}
	for i := range keys {
		b.Keys = append(b.Keys, drivers.KeyName(int64(i+1)))
	}
	return b
}

// TestMisbehavingAgents: an agent that hangs, exits mid-block, returns
// the wrong count, answers garbage or too much, or leaves a child behind
// gets an error that says what it did, within the op timeout and the
// grace, and no process of it is left.
func TestMisbehavingAgents(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want string
	}{
		{"hang", "it hung: no answer to block c1 of 3 keys within"},
		{"exit", "it closed its stdout before its answer to block c1 of 3 keys (it exited with status 3)"},
		{"count", "it returned 2 latencies for block c1 of 3 keys"},
		{"garbage", "it answered garbage as its answer to block c1 of 3 keys"},
		{"huge", "it wrote a line over"},
		{"negative", "a monotonic clock never runs back"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			a, err := fake(t, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			pid := a.PID()
			if _, err := a.Open(context.Background(), agents.Open{ID: "c1", Path: "tcp", Address: "127.0.0.1:1"}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = a.Block(context.Background(), block(3))
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if tc.mode == "exit" && !strings.Contains(err.Error(), "dying mid-block") {
				t.Errorf("error %v does not carry the agent's stderr", err)
			}
			if limit := limits.OpTimeout + limits.Grace + 3*limits.PerOp + 2*time.Second; took > limit {
				t.Errorf("the error took %s, more than %s", took, limit)
			}
			assertGone(t, pid)
			if _, err := a.Block(context.Background(), block(3)); err == nil {
				t.Error("a stopped agent took another block")
			}
			if err := a.Close(); err != nil {
				t.Errorf("close after the error: %v", err)
			}
		})
	}
}

// TestAgentDeafOrCancelled: an agent that never reads its stdin cannot
// block dbsock's write of a large request past the deadline, and a
// cancelled context ends a wait at once; each stops the agent.
func TestAgentDeafOrCancelled(t *testing.T) {
	deaf := limits
	deaf.PerOp = 0
	a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"testdata/fake.sh", "silent"}}, deaf)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Block(context.Background(), block(50000)) // far more than a pipe holds
	if err == nil || !strings.Contains(err.Error(), "write the request to its stdin") {
		t.Fatalf("a block to an agent that does not read: %v", err)
	}
	assertGone(t, a.PID())

	a, err = fake(t, "hang")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = a.Block(ctx, block(3))
	if err == nil || !strings.Contains(err.Error(), "stopped waiting for its answer to block c1 of 3 keys: context canceled") {
		t.Fatalf("a cancelled block: %v", err)
	}
	assertGone(t, a.PID())
}

// TestAgentNeverQuotesThePassword: an agent that echoes its open message
// (password and all) to stdout and stderr gets an error that says what
// it did and quotes neither line: each carried the password.
func TestAgentNeverQuotesThePassword(t *testing.T) {
	a, err := fake(t, "echo")
	if err != nil {
		t.Fatal(err)
	}
	const password = "Sw0rdf1sh-secret"
	_, err = a.Open(context.Background(), agents.Open{ID: "c1", Path: "tcp", Address: "127.0.0.1:1", Password: password})
	if err == nil || !strings.Contains(err.Error(), "answered garbage") || !strings.Contains(err.Error(), "its stderr") {
		t.Fatalf("an agent that echoes its open: %v", err)
	}
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), `\"password\"`) || !strings.Contains(err.Error(), "not quoted") {
		t.Errorf("the error shows the password, or the line that carried it: %v", err)
	}
	assertGone(t, a.PID())
}

// TestAgentSilentAtStart: an agent that never says hello, or says it in
// another protocol, fails Start and is not left running.
func TestAgentSilentAtStart(t *testing.T) {
	a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"sleep", "600"}}, limits)
	if err == nil || !strings.Contains(err.Error(), "it hung: no hello within 2s (an agent writes its hello, and each answer, as one line and flushes it") {
		t.Fatalf("Start of a silent agent: %v, %v", a, err)
	}
	_, err = agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"echo", `{"type":"hello","protocol":9}`}}, limits)
	if err == nil || !strings.Contains(err.Error(), "speaks protocol 9") {
		t.Fatalf("Start of an agent of protocol 9: %v", err)
	}
	_, err = agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"true"}}, limits)
	if err == nil || !strings.Contains(err.Error(), "closed its stdout before its hello (it exited with status 0)") {
		t.Fatalf("Start of an agent that exits: %v", err)
	}
	if kids := testutil.Children(t); len(kids) > 0 {
		t.Errorf("processes left: %v", kids)
	}
}

// TestAgentEnvironment: the agent's environment holds PATH, LANG and what
// its spec names, nothing of dbsock's but the mark of its run; a DBSOCK_
// variable is refused.
func TestAgentEnvironment(t *testing.T) {
	t.Setenv("DBSOCK_SECRET", "s3cret")
	a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Env: []string{"NODE_PATH=/x"},
		Argv: []string{"sh", "-c", `printf '{"type":"hello","protocol":1,"language":"%s","library":"env"}\n' "$(env | sort | tr '\n' ' ')"; exec sleep 600`}}, limits)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	env := a.Hello().Language
	// The one variable of dbsock's: which run the agent is of (its
	// owner: pid, start time, boot), for dbsock clean.
	if mark := regexp.MustCompile(agents.MarkEnv + `=[0-9]+ [0-9]+ [-0-9a-f]+ pidns=[0-9]+ `); !mark.MatchString(env) {
		t.Errorf("the agent's environment %q has no %s naming this run", env, agents.MarkEnv)
	} else {
		env = mark.ReplaceAllString(env, "")
	}
	if strings.Contains(env, "DBSOCK") || !strings.Contains(env, "NODE_PATH=/x") || !strings.Contains(env, "PATH=/usr/local/bin:/usr/bin:/bin") {
		t.Errorf("the agent's environment is %q", env)
	}
	_, err = agents.Start(context.Background(), agents.Spec{Stack: "cmd", Env: []string{"DBSOCK_PASSWORD=x"}, Argv: []string{"true"}}, limits)
	if err == nil {
		t.Error("an environment with DBSOCK_PASSWORD was taken")
	}
}

// TestAgentWellBehaved: the fake's right answers pass, and Close ends
// its process and any child of it.
func TestAgentWellBehaved(t *testing.T) {
	for _, mode := range []string{"ok", "child"} {
		a, err := fake(t, mode)
		if err != nil {
			t.Fatal(err)
		}
		pid := a.PID()
		if got := a.Hello(); got.Language != "sh" || got.Library != "fake" {
			t.Errorf("hello %+v", got)
		}
		if _, err := a.Block(context.Background(), block(0)); err == nil || !strings.Contains(err.Error(), "want 1 to 100000") {
			t.Errorf("%s: a block of no keys: %v", mode, err)
		}
		r, err := a.Block(context.Background(), block(3))
		if err != nil || len(r.Ns) != 3 {
			t.Fatalf("%s: block: %+v, %v", mode, r, err)
		}
		if ns, err := a.Overhead(context.Background(), 1); err != nil || len(ns) != 1 {
			t.Fatalf("%s: overhead: %v, %v", mode, ns, err)
		}
		if _, err := a.Overhead(context.Background(), 2); err == nil || !strings.Contains(err.Error(), "it returned 1 latencies for the overhead of 2 empty ops") {
			t.Fatalf("%s: overhead of 2 answered with 1: %v", mode, err)
		}
		_ = a.Close()
		assertGone(t, pid)
	}
	if kids := testutil.Children(t); len(kids) > 0 {
		t.Errorf("processes left: %v", kids)
	}
}

// assertGone fails unless the process group pid leads has no live
// process (a zombie that init has not reaped yet is dead) within 2 s.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	var live []string
	for range 200 {
		if live = groupMembers(pid); len(live) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("the agent's process group %d still has %v", pid, live)
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // state ppid pgrp ...
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			out = append(out, f+": "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return out
}
