package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestStacksConnect: every stack times the connect scenario in its agent,
// at rest and with several connections at once, each op a connection of
// its own that the server counted (Redis, MariaDB and memcached keep
// counts of the connections they accepted).
func TestStacksConnect(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "memcached")
	needStacks(t)
	for _, conc := range []string{"1", "2"} {
		code, out, stderr := dbsock(t, "run", "redis", "mysql", "memcached", "echo", "--clients", "c,python,node,php,ruby,java", "--scenario", "connect", "--provider", "local",
			"--paths", "tcp,unix", "--concurrency", conc, "--n", "40", "--blocks", "2", "--instances", "1", "--warmup", "4", "--format", "json")
		if code != 0 {
			t.Fatalf("--concurrency %s: exit %d: %s", conc, code, stderr)
		}
		var rep struct {
			Summary []struct {
				Stack    string `json:"stack"`
				Scenario string `json:"scenario"`
				Sides    []struct {
					N      int64 `json:"n"`
					Errors int64 `json:"errors"`
				} `json:"sides"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		stacks := map[string]bool{}
		for _, s := range rep.Summary {
			stacks[s.Stack] = true
			if s.Scenario != "connect" || len(s.Sides) != 2 {
				t.Errorf("--concurrency %s, %s: scenario %q, %d sides; want connect on tcp and unix", conc, s.Stack, s.Scenario, len(s.Sides))
			}
			for _, side := range s.Sides {
				if side.N != 40 || side.Errors != 0 {
					t.Errorf("--concurrency %s, %s: %d ops, %d errors; want 40, none", conc, s.Stack, side.N, side.Errors)
				}
			}
		}
		if len(stacks) != 6 {
			t.Errorf("--concurrency %s: stacks %v; want c, python, node, php, ruby and java", conc, stacks)
		}
	}
}

// TestAgentConnectAudited: an agent that says it timed the connect
// scenario but looked up on the connection it had open is caught by the
// server's count of the connections it accepted.
func TestAgentConnectAudited(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/blocklie.py")
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := dbsock(t, "run", "redis", "--clients", "cmd:/usr/bin/python3 "+script+" connectliar", "--scenario", "connect",
		"--provider", "local", "--paths", "tcp,unix", "--n", "40", "--blocks", "2", "--instances", "1", "--warmup", "4", "--format", "json")
	want := "on connections of their own on"
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "INFO stats total_connections_received moved by") {
		t.Errorf("exit %d, stderr %q: want exit 1 and an error saying %q", code, stderr, want)
	}
}
