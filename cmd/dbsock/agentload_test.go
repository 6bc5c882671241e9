package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestStacksAtLoad: every stack runs a case at load (many connections,
// an offered rate) in its own worker model, which the report names, each
// of its connections verified, with the generator's figures of every
// side. Whether a stack held the rate on this machine is not asserted
// here: that is a measurement (docs/agents.md), not a test.
func TestStacksAtLoad(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	code, out, stderr := dbsock(t, "run", "redis", "--clients", "go,c,python,node,php,ruby", "--provider", "local", "--paths", "tcp,unix",
		"--concurrency", "4", "--rate", "1000", "--n", "400", "--blocks", "2", "--instances", "1", "--warmup", "10", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary []struct {
			Stack       string `json:"stack"`
			Concurrency int    `json:"concurrency"`
			Client      *struct {
				Workers string `json:"workers"`
			} `json:"client"`
			Sides []struct {
				N         int64 `json:"n"`
				Generator *struct {
					OfferedRate  float64 `json:"offered_rate"`
					AchievedRate float64 `json:"achieved_rate"`
				} `json:"generator"`
			} `json:"sides"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"": "goroutines", "go": "goroutines", "c": "threads", "python": "processes", "node": "event-loop", "php": "processes", "ruby": "processes"}
	seen := map[string]bool{}
	for _, s := range rep.Summary {
		seen[s.Stack] = true
		if s.Client == nil || s.Client.Workers != want[s.Stack] {
			t.Errorf("%q: client %+v; want workers %q", s.Stack, s.Client, want[s.Stack])
		}
		if len(s.Sides) != 2 {
			t.Errorf("%q: %d sides; want tcp and unix", s.Stack, len(s.Sides))
		}
		for _, side := range s.Sides {
			if g := side.Generator; g == nil || g.OfferedRate != 1000 || g.AchievedRate <= 0 {
				t.Errorf("%q: generator %+v; want the offered 1000/s and what was reached", s.Stack, g)
			}
			if side.N != 400 {
				t.Errorf("%q: a side timed %d lookups; want the 400 asked for, shared by the 4 connections", s.Stack, side.N)
			}
		}
	}
	if len(seen) != 6 {
		t.Errorf("stacks measured: %v; want all six", seen)
	}
}

// TestCEventLoop: --clients c,c:eventloop measures Redis and PostgreSQL
// at load from the C stack's two worker models, a thread per connection
// and one event loop, each a case of its own whose every op the server
// counted (the audit), paced and in a closed loop; the JSON and the
// Markdown report name the model each ran; echo, whose libc has no
// asynchronous API, is skipped from the event loop with why, and
// measured from the threads.
func TestCEventLoop(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "postgres")
	needStacks(t)
	for _, rate := range []string{"1000", "0"} {
		out := filepath.Join(t.TempDir(), "ev.json")
		args := []string{"run", "redis", "postgres", "echo", "--clients", "c,c:eventloop", "--provider", "local", "--paths", "tcp,unix",
			"--concurrency", "4", "--n", "400", "--blocks", "2", "--instances", "1", "--warmup", "10", "--format", "json", "-o", out}
		if rate != "0" {
			args = append(args, "--rate", rate)
		}
		code, _, stderr := dbsock(t, args...)
		if code != 0 {
			t.Fatalf("rate %s: exit %d: %s", rate, code, stderr)
		}
		var rep struct {
			Targets []struct {
				Name    string                           `json:"target"`
				Skipped []struct{ Stack, Reason string } `json:"skipped_clients"`
			} `json:"targets"`
			Summary []struct {
				Target, Stack string
				Client        *struct{ Workers, Library, Audit string } `json:"client"`
				Sides         []struct{ N int64 }                       `json:"sides"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(mustRead(t, out), &rep); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"c": "threads", "c:eventloop": "event-loop"}
		cases := map[string]bool{}
		for _, s := range rep.Summary {
			cases[s.Target+"@"+s.Stack] = true
			if s.Client == nil || s.Client.Workers != want[s.Stack] || (s.Target != "echo" && s.Client.Audit == "") {
				t.Errorf("rate %s: %s@%s: client %+v; want workers %q, audited", rate, s.Target, s.Stack, s.Client, want[s.Stack])
			}
			for _, side := range s.Sides {
				if side.N != 400 {
					t.Errorf("rate %s: %s@%s: a side timed %d lookups; want 400", rate, s.Target, s.Stack, side.N)
				}
			}
		}
		for _, c := range []string{"redis@c", "redis@c:eventloop", "postgres@c", "postgres@c:eventloop", "echo@c"} {
			if !cases[c] {
				t.Errorf("rate %s: no case %s among %v", rate, c, cases)
			}
		}
		if cases["echo@c:eventloop"] || !strings.Contains(fmt.Sprint(rep.Targets), "event loop drives the libraries with an asynchronous API") {
			t.Errorf("rate %s: echo from c:eventloop not skipped with why: %+v", rate, rep.Targets)
		}
		if code, md, stderr := dbsock(t, "report", out); code != 0 || !strings.Contains(md, "one event loop") || !strings.Contains(md, "a thread per connection") {
			t.Errorf("rate %s: report: exit %d, %s; want both models named in:\n%s", rate, code, stderr, md)
		}
	}
}

// TestAgentLoadsAudited: an agent whose connections are real and
// verified but whose loads lie fails its case with what disagreed: ops
// it never did (the server's count), or ops that by its own schedule
// ended after the request had returned (dbsock's clock).
func TestAgentLoadsAudited(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/blocklie.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, want string }{
		{"loadliar", "connections, but the server's INFO commandstats cmdstat_get calls moved by"},
		{"loadlate", "later than the whole request took on dbsock's clock"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			code, _, stderr := dbsock(t, "run", "redis", "--clients", "cmd:/usr/bin/python3 "+script+" "+tc.mode, "--provider", "local",
				"--paths", "tcp,unix", "--concurrency", "4", "--rate", "2000", "--n", "400", "--blocks", "2", "--instances", "1", "--warmup", "10", "--format", "json")
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "the server did not see what the agent reported") {
				t.Errorf("exit %d, stderr %q: want exit 1 and an error saying %q", code, stderr, tc.want)
			}
		})
	}
}

// TestAgentProtocol1AtRestOnly: an agent of protocol 1 still measures at
// rest, and is refused a load in one line that says what changed.
func TestAgentProtocol1AtRestOnly(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/blocklie.py")
	if err != nil {
		t.Fatal(err)
	}
	agent := "cmd:/usr/bin/python3 " + script + " v1"
	common := []string{"run", "redis", "--clients", agent, "--provider", "local", "--paths", "tcp,unix", "--n", "100", "--instances", "1", "--warmup", "10", "--format", "json"}
	if code, _, stderr := dbsock(t, common...); code != 0 {
		t.Errorf("at rest: exit %d: %s", code, stderr)
	}
	code, _, stderr := dbsock(t, append(common, "--concurrency", "2")...)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code == 0 || !strings.Contains(last, "it speaks agent protocol 1, which measures one connection in a closed loop") {
		t.Errorf("at load: exit %d, last line %q; want it refused, saying what changed", code, last)
	}
}

// TestAgentLoadForADuration: a closed loop for a duration runs in the
// agent's workers too: each path's connections do lookups until the
// block's share of the duration is over, and the run counts them.
func TestAgentLoadForADuration(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	code, out, stderr := dbsock(t, "run", "redis", "--clients", "c", "--provider", "local", "--paths", "tcp,unix",
		"--concurrency", "2", "--duration", "1s", "--blocks", "2", "--instances", "1", "--warmup", "10", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary []struct {
			Stack string `json:"stack"`
			Sides []struct {
				N int64 `json:"n"`
			} `json:"sides"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Summary) != 1 || rep.Summary[0].Stack != "c" || len(rep.Summary[0].Sides) != 2 {
		t.Fatalf("summary %+v; want the c stack's case on two paths", rep.Summary)
	}
	for _, s := range rep.Summary[0].Sides {
		if s.N < 100 {
			t.Errorf("a side timed %d lookups in its second; want the lookups of a closed loop on 2 connections", s.N)
		}
	}
}

// TestJavaStackAtLoad: the Java stack (which has no Redis client, so
// TestStacksAtLoad does not see it) runs a paced load on PostgreSQL in a
// thread per connection, which the report names, every side with the
// lookups asked for and the generator's figures.
func TestJavaStackAtLoad(t *testing.T) {
	testutil.NeedAny(t, "initdb")
	needStacks(t)
	code, out, stderr := dbsock(t, "run", "postgres", "--clients", "java", "--provider", "local", "--paths", "tcp,unix",
		"--concurrency", "4", "--rate", "1000", "--n", "400", "--blocks", "2", "--instances", "1", "--warmup", "10", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary []struct {
			Stack  string `json:"stack"`
			Client *struct {
				Workers string `json:"workers"`
			} `json:"client"`
			Sides []struct {
				N         int64 `json:"n"`
				Generator *struct {
					AchievedRate float64 `json:"achieved_rate"`
				} `json:"generator"`
			} `json:"sides"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Summary) != 1 || rep.Summary[0].Stack != "java" || rep.Summary[0].Client == nil || rep.Summary[0].Client.Workers != "threads" {
		t.Fatalf("cases %+v; want postgres from java in threads", rep.Summary)
	}
	for _, side := range rep.Summary[0].Sides {
		if side.N != 400 || side.Generator == nil || side.Generator.AchievedRate <= 0 {
			t.Errorf("a side timed %d lookups, generator %+v; want 400 and the rate reached", side.N, side.Generator)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
