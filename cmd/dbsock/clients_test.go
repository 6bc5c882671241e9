package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/internal/testutil"
)

// TestClientsRefused: a --clients that names no stack, names one twice,
// gives Go a library, or asks agents for what they cannot do, or with
// which nothing can be measured, exits 2 with one line naming the flag,
// before anything starts.
func TestClientsRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown stack", []string{"redis", "--clients", "go,cobol"}, `--clients "cobol" is not a client stack; give some of go, c, python, node, php`},
		{"empty", []string{"redis", "--clients", ""}, `--clients "" names no client stack; give some of go, c, python, node, php`},
		{"empty stack", []string{"redis", "--clients", "go,,c"}, `--clients "" is not a client stack`},
		{"twice", []string{"redis", "--clients", "python,go,python"}, "--clients names python twice"},
		{"go with a library", []string{"redis", "--clients", "go:pgx"}, `--clients "go:pgx": the go stack's library is each target's own driver`},
		{"library not a name", []string{"postgres", "--clients", "python:Psy/copg"}, `is not a library's name`},
		{"pipeline", []string{"redis", "--clients", "c", "--pipeline", "8"}, "leave out --pipeline"},
		{"writes", []string{"redis", "--clients", "php", "--op", "update"}, "an agent reads: leave out --op update"},
		{"cmd without a command", []string{"redis", "--clients", "go,cmd: "}, `--clients "cmd: ": give your agent's command after cmd: on one line`},
		{"cmd with a control character", []string{"redis", "--clients", "cmd:agent\tx"}, `give your agent's command after cmd: on one line`},
		{"nothing to measure", []string{"grpc", "http", "--clients", "python,node"}, "--clients python,node: nothing to measure (grpc from python: no agent measures grpc"},
		{"no such model", []string{"redis", "--clients", "c:nosuch"},
			`--clients "c:nosuch": the c stack has no library or worker model "nosuch": it has threads (c:threads), event-loop (c:eventloop), the first its default; its libraries are`},
		{"a model it has not", []string{"redis", "--clients", "python:eventloop"}, `the python stack has no library or worker model "eventloop": it has processes (python:processes)`},
		{"connect from an event loop", []string{"redis", "--clients", "c:eventloop", "--scenario", "connect"},
			"c:eventloop: its event loop times lookups on open connections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := dbsock(t, append([]string{"run", "--provider", "local"}, tt.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tt.want)
			}
			if strings.Contains(stderr, "Plan.") || strings.Contains(stderr, "Options.") {
				t.Errorf("the error names a field, not a flag: %q", stderr)
			}
		})
	}
}

// clientsJSON is what TestClientStacks reads of a run's JSON.
type clientsJSON struct {
	Config struct {
		Clients []string `json:"clients"`
	} `json:"config"`
	Targets []struct {
		Name    string `json:"target"`
		Skipped []struct {
			Stack  string `json:"stack"`
			Reason string `json:"reason"`
		} `json:"skipped_clients"`
	} `json:"targets"`
	Runs []struct {
		Target    string `json:"target"`
		Stack     string `json:"stack"`
		Transport string `json:"transport"`
		Verified  bool   `json:"transport_verified"`
		Evidence  string `json:"transport_evidence"`
		N         int64  `json:"n"`
		Errors    int64  `json:"errors"`
	} `json:"runs"`
	Summary []struct {
		Target string `json:"target"`
		Stack  string `json:"stack"`
		Client *struct {
			Language       string `json:"language"`
			RuntimeVersion string `json:"runtime_version"`
			Library        string `json:"library"`
			LibraryVersion string `json:"library_version"`
			OverheadNs     int64  `json:"timing_overhead_ns"`
			FreshProcess   bool   `json:"fresh_process"`
		} `json:"client"`
		Sides []struct {
			Path string `json:"path"`
			N    int64  `json:"n"`
			P50  struct {
				P50 int64 `json:"p50"`
			} `json:"latency_ns"`
		} `json:"sides"`
		Comparisons []struct {
			Path       string  `json:"path"`
			Baseline   string  `json:"baseline"`
			SpeedupP50 float64 `json:"speedup_p50"`
		} `json:"comparisons"`
	} `json:"summary"`
}

// TestClientStacks: dbsock run redis postgres echo --clients
// go,c,python,node,php,ruby,java against real local servers measures each
// (target, stack) as a case of its own: every run verified on the server
// side, both sides with ops and latencies, the comparison of Unix with
// TCP, and the stack's client named from its agent's hello; echo is
// measured from Go, C, Python, Ruby and Java, and skipped with a reason
// from the stacks that have no library for it, as redis is from Java.
func TestClientStacks(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "initdb")
	needStacks(t)
	stacks := []string{"go", "c", "python", "node", "php", "ruby", "java"}
	rep, _ := runClients(t, "run", "redis", "postgres", "echo", "--clients", strings.Join(stacks, ","), "--provider", "local",
		"--paths", "tcp,unix", "--format", "json", "--n", "300", "--instances", "1", "--warmup", "100")
	if !slices.Equal(rep.Config.Clients, stacks) {
		t.Errorf("config clients %v, want %v", rep.Config.Clients, stacks)
	}
	languages := map[string]string{"": "go", "c": "c", "python": "python", "node": "node", "php": "php", "ruby": "ruby", "java": "java"}
	seen := map[string]bool{}
	for _, s := range rep.Summary {
		key := s.Target + " from " + languages[s.Stack]
		seen[key] = true
		if c := s.Client; c == nil || c.Language != languages[s.Stack] || c.RuntimeVersion == "" || (s.Target != "echo" && (c.Library == "" || c.LibraryVersion == "")) {
			t.Errorf("%s: client %+v", key, s.Client)
		} else if (c.OverheadNs > 0) != (s.Stack != "" || c.FreshProcess) {
			t.Errorf("%s: the agent's own timing cost %d ns (an agent's is measured, Go's in dbsock's own process is not)", key, c.OverheadNs)
		} else if c.FreshProcess != (s.Stack != "" || s.Target != "echo") {
			t.Errorf("%s: a fresh client process for each server instance is %v: every agent's, and Go's but where the target's server shows no connection by a token (echo)", key, c.FreshProcess)
		}
		if len(s.Sides) != 2 || len(s.Comparisons) != 1 {
			t.Fatalf("%s: %d sides and %d comparisons, want 2 and 1", key, len(s.Sides), len(s.Comparisons))
		}
		for _, side := range s.Sides {
			if side.N < 300 || side.P50.P50 <= 0 {
				t.Errorf("%s over %s: n %d, p50 %d ns", key, side.Path, side.N, side.P50.P50)
			}
		}
		if c := s.Comparisons[0]; c.Path != "unix" || c.Baseline != "tcp" || c.SpeedupP50 <= 0 {
			t.Errorf("%s: comparison %+v", key, c)
		}
	}
	for _, target := range []string{"redis", "postgres"} {
		for _, stack := range stacks {
			if !seen[target+" from "+stack] && target+" from "+stack != "redis from java" {
				t.Errorf("no case of %s from %s", target, stack)
			}
		}
	}
	if !seen["echo from go"] || !seen["echo from c"] || !seen["echo from python"] || !seen["echo from ruby"] || !seen["echo from java"] || len(rep.Summary) != 18 {
		t.Errorf("%d cases (%v), want 18 with echo from go, c, python, ruby and java", len(rep.Summary), seen)
	}
	checkClientRuns(t, rep)
	for _, tg := range rep.Targets {
		want := map[string]int{"echo": 2, "redis": 1}[tg.Name]
		if len(tg.Skipped) != want {
			t.Errorf("%s: skipped %+v, want %d stacks", tg.Name, tg.Skipped, want)
		}
		for _, sk := range tg.Skipped {
			if !strings.Contains(sk.Reason, "agent has no client library for "+tg.Name) || tg.Name == "redis" && !strings.Contains(sk.Reason, "no Java Redis client") {
				t.Errorf("%s from %s skipped for %q", tg.Name, sk.Stack, sk.Reason)
			}
		}
	}
}

// TestClientStacksEveryTarget: the other targets an agent measures
// (MariaDB, memcached, PgBouncer) from every stack whose library Debian
// has, each (target, stack) verified on the server side over tcp and unix
// with no failed op; the pairs Debian has no library for (memcached from
// Node.js; from Ruby, Debian's dalli cannot log in to dbsock's memcached;
// from Java, spymemcached has no Unix socket) and the target no agent can
// be verified on (FerretDB) are skipped, each with its reason, and the
// other stacks still run.
func TestClientStacksEveryTarget(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "memcached")
	testutil.NeedAny(t, "pgbouncer")
	testutil.NeedAny(t, "initdb")
	testutil.NeedAny(t, "ferretdb")
	needStacks(t)
	stacks := []string{"go", "c", "python", "node", "php", "ruby", "java"}
	rep, _ := runClients(t, "run", "mysql", "memcached", "pgbouncer", "mongo", "--clients", strings.Join(stacks, ","), "--provider", "local",
		"--paths", "tcp,unix", "--format", "json", "--n", "200", "--instances", "1", "--warmup", "50")
	checkClientRuns(t, rep)
	measured := map[string]bool{}
	for _, s := range rep.Summary {
		stack := s.Stack
		if stack == "" {
			stack = "go"
		}
		measured[s.Target+" from "+stack] = true
		if len(s.Sides) != 2 || len(s.Comparisons) != 1 || s.Comparisons[0].SpeedupP50 <= 0 {
			t.Errorf("%s from %s: %d sides, comparisons %+v", s.Target, stack, len(s.Sides), s.Comparisons)
		}
	}
	skipped := map[string]string{}
	for _, tg := range rep.Targets {
		for _, sk := range tg.Skipped {
			skipped[tg.Name+" from "+sk.Stack] = sk.Reason
		}
	}
	for _, target := range []string{"mysql", "memcached", "pgbouncer", "mongo"} {
		for _, stack := range stacks {
			key := target + " from " + stack
			unsupported := target == "mongo" && stack != "go" || key == "memcached from node" || key == "memcached from ruby" || key == "memcached from java"
			switch {
			case unsupported && (measured[key] || skipped[key] == ""):
				t.Errorf("%s: measured %v, skipped for %q; want skipped with a reason", key, measured[key], skipped[key])
			case !unsupported && !measured[key]:
				t.Errorf("%s: not measured (skipped for %q)", key, skipped[key])
			}
		}
	}
	if r := skipped["memcached from node"]; !strings.Contains(r, "node") {
		t.Errorf("memcached from node skipped for %q; want the reason to name the stack", r)
	}
	if r := skipped["memcached from ruby"]; !strings.Contains(r, "binary protocol only") {
		t.Errorf("memcached from ruby skipped for %q; want the stack's reason (dalli's binary protocol)", r)
	}
	if r := skipped["memcached from java"]; !strings.Contains(r, "no Unix socket") {
		t.Errorf("memcached from java skipped for %q; want the stack's reason (spymemcached has no Unix socket)", r)
	}
}

// checkClientRuns: every run of every stack on both paths was verified on
// the server side before it was timed, and no op failed.
func checkClientRuns(t *testing.T, rep clientsJSON) {
	t.Helper()
	paths := map[string]map[string]bool{}
	for _, r := range rep.Runs {
		key := r.Target + " from " + r.Stack
		if !r.Verified || r.Evidence == "" || r.N == 0 || r.Errors != 0 {
			t.Errorf("%s over %s: verified %v (%q), %d ops, %d errors", key, r.Transport, r.Verified, r.Evidence, r.N, r.Errors)
		}
		if paths[key] == nil {
			paths[key] = map[string]bool{}
		}
		paths[key][r.Transport] = true
	}
	for key, p := range paths {
		if !p["tcp"] || !p["unix"] {
			t.Errorf("%s ran over %v, want tcp and unix", key, p)
		}
	}
}

// TestClientStacksOverTLS: over tcp, tcp2, tls and unix, a stack whose
// library has TLS (redis-py) is measured and verified on all four, and one
// whose library has none (hiredis 0.14) on tcp, tcp2 and unix, with a
// warning saying why not on tls; the A/A control tcp2 is verified on the
// server side as 127.0.0.1 TCP from every stack.
func TestClientStacksOverTLS(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	rep, out := runClients(t, "run", "redis", "--clients", "c,python", "--provider", "local", "--paths", "tcp,tcp2,tls,unix",
		"--format", "json", "--n", "200", "--instances", "1", "--warmup", "50")
	checkClientRuns(t, rep)
	tls, tcp2 := map[string]bool{}, map[string]bool{}
	for _, r := range rep.Runs {
		tls[r.Stack] = tls[r.Stack] || r.Transport == "tls"
		tcp2[r.Stack] = tcp2[r.Stack] || (r.Transport == "tcp2" && strings.Contains(r.Evidence, "127.0.0.1"))
	}
	if !tcp2["c"] || !tcp2["python"] {
		t.Errorf("tcp2 runs seen as 127.0.0.1 by stack: %v; want c's and python's", tcp2)
	}
	if !tls["python"] || tls["c"] || len(rep.Summary) != 2 {
		t.Errorf("tls runs by stack %v, %d cases; want python's and not c's, 2 cases", tls, len(rep.Summary))
	}
	if !strings.Contains(out, "redis from c is not measured on the tls path: hiredis 0.14 has no TLS") {
		t.Error("no warning that c is not measured on tls")
	}
}

// needStacks skips (or fails under DBSOCK_REQUIRE_STACKS) without the
// client stacks installed.
func needStacks(t *testing.T) {
	t.Helper()
	dir, err := agents.Dir()
	if err == nil {
		err = agents.Installed(dir)
	}
	if err != nil {
		if os.Getenv("DBSOCK_REQUIRE_STACKS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// docAgent is the first Python code block of docs/agents.md, written to a
// file as a user would copy it.
func docAgent(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/agents.md has no Python code block")
	}
	file := filepath.Join(t.TempDir(), "agent.py")
	if err := os.WriteFile(file, m[1], 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestOwnAgent: the docs' example agent, copied verbatim, runs with
// --clients cmd:... and gives a result verified on the server side on
// both paths, its row naming it as the user's agent.
func TestOwnAgent(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	cmd := "cmd:/usr/bin/python3 " + docAgent(t)
	rep, _ := runClients(t, "run", "redis", "--clients", "go,"+cmd, "--provider", "local",
		"--format", "json", "--n", "300", "--instances", "1", "--warmup", "50")
	checkClientRuns(t, rep)
	found := false
	for _, s := range rep.Summary {
		if s.Stack == "cmd" { // a cmd: agent's stack is named cmd
			found = true
			if c := s.Client; c == nil || c.Language != "cmd" || !strings.HasPrefix(c.RuntimeVersion, "python ") || c.Library != "redis-py" || len(s.Comparisons) != 1 {
				t.Errorf("your agent's case: client %+v, %d comparisons", s.Client, len(s.Comparisons))
			}
		}
	}
	if !found || len(rep.Summary) != 2 {
		t.Errorf("%d cases, your agent's among them %v", len(rep.Summary), found)
	}
}

// TestOwnAgentMisbehaves: an agent of the user's that hangs, exits
// mid-block, returns the wrong count of latencies, or claims TCP while it
// uses the socket fails the run with an error naming what it did, within
// --op-timeout and 2 s of the op (and its start-up), and nothing it
// started is left running.
func TestOwnAgentMisbehaves(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/unruly.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, want string }{
		{"hang", "it hung: no answer to block unix-1 of"},
		{"exit", "it closed its stdout before its answer to block unix-1 of"},
		{"count", "latencies for block unix-1 of"},
		{"lie", "was to be on tcp (127.0.0.1:"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := dbsock(t, "run", "redis", "--clients", "cmd:/usr/bin/python3 "+script+" "+tc.mode, "--provider", "local",
				"--paths", "unix,tcp", "--n", "100", "--instances", "1", "--warmup", "10", "--op-timeout", "1s")
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "the cmd agent") {
				t.Errorf("exit %d, stderr %q: want exit 1 and an error saying %q", code, stderr, tc.want)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the error took %s", took) // a bound on a hang, not a timing check: the agent's wait is 1s + 2s
			}
			out, _ := exec.Command("pgrep", "-f", script+" "+tc.mode).Output()
			if len(out) > 0 {
				t.Errorf("left running: %s", out)
			}
		})
	}
}

// runClients runs dbsock with args, which must exit 0 with a JSON report,
// and returns the report decoded and as written.
func runClients(t *testing.T, args ...string) (clientsJSON, string) {
	t.Helper()
	code, out, stderr := dbsock(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var rep clientsJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep, out
}

// TestRubyHiredisOffTLS: a stack's library whose agent says in its hello
// that it has no TLS (Ruby's hiredis, beside redis-rb's own driver, which
// has) is measured on the other paths, with a warning, and redis-rb on
// all of them.
func TestRubyHiredisOffTLS(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	rep, out := runClients(t, "run", "redis", "--clients", "ruby:hiredis,ruby", "--provider", "local", "--paths", "tcp,unix,tls",
		"--format", "json", "--n", "200", "--instances", "1", "--warmup", "50")
	checkClientRuns(t, rep)
	paths := map[string][]string{}
	for _, r := range rep.Runs {
		paths[r.Stack] = append(paths[r.Stack], r.Transport)
	}
	if slices.Contains(paths["ruby:hiredis"], "tls") || !slices.Contains(paths["ruby:hiredis"], "unix") || !slices.Contains(paths["ruby"], "tls") {
		t.Errorf("paths measured %v; want ruby:hiredis on tcp and unix only, ruby on tls too", paths)
	}
	if !strings.Contains(out, "redis from ruby:hiredis is not measured on the tls path: hiredis has no TLS") {
		t.Error("no warning that ruby:hiredis is not measured on the tls path")
	}
}
