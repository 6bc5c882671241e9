package agents_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/targets"
)

// mustPass are the checks every agent passes, on every target: none of
// them may be skipped.
var mustPass = []string{"hello", "overhead", "open tcp", "open unix", "token", "block", "open error", "unknown id", "malformed", "close", "exit"}

// TestConformance: every stack directory of agents/, found by reading the
// directory (agents.Claims), passes the conformance suite on every target
// its stack.json claims, with each of its libraries, against real local
// servers: its loads where it names a worker model, the connect scenario
// where it says connect, the values' errors where the server has rows.
func TestConformance(t *testing.T) {
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	claims, err := agents.Claims(".")
	if err != nil {
		t.Fatal(err)
	}
	conformClaims(t, ".", withoutAlias(claims), conformant)
}

// conformant checks claim c's results: every check of mustPass passed,
// load where its stack names a worker model, connect where it says
// connect (and not why not), values where the server has rows.
func conformant(t *testing.T, c agents.Claim, rs []agents.Result) {
	d := agents.Declared(".", c.Stack)
	want := slices.Clone(mustPass)
	if d.DefaultModel() != "" {
		want = append(want, "load")
	}
	if d.Connect && agents.NoConnect(".", c.Stack, family(c.Target)) == "" && agents.ModelNoConnect(".", c.Stack, c.Model) == "" {
		want = append(want, "connect")
	}
	if family(c.Target) != "pingpong" {
		want = append(want, "values")
	}
	for _, r := range rs {
		if r.Failed() || (r.Skipped != "" && slices.Contains(want, r.Check)) {
			t.Errorf("%s (want it passed)", r.Line())
		}
	}
}

// conformClaims runs the suite on each claim of the agents directory
// dir, a real local server started and seeded once per target, and
// hands each claim's results to check (after logging them).
func conformClaims(t *testing.T, dir string, claims []agents.Claim, check func(*testing.T, agents.Claim, []agents.Result)) {
	var order []string
	byTarget := map[string][]agents.Claim{}
	for _, c := range claims {
		if byTarget[c.Target] == nil {
			order = append(order, c.Target)
		}
		byTarget[c.Target] = append(byTarget[c.Target], c)
	}
	for _, name := range order {
		t.Run(name, func(t *testing.T) {
			tg, known := stackTarget(name)
			tt, ok := targets.Lookup(name)
			if !known || !ok {
				t.Fatalf("a stack claims target %s, which the tests start no server of", name)
			}
			tg.need(t)
			srv, driver := startSeeded(t, name)
			for _, c := range byTarget[name] {
				def, err := agents.Library(dir, c.Stack, c.Target, family(c.Target), "")
				if err != nil {
					t.Fatal(err)
				}
				t.Run(c.Name(def), func(t *testing.T) {
					spec, err := agents.ForModel(dir, c.Stack, c.Target, family(c.Target), c.Library, c.Model)
					if err != nil {
						needStack(t, err)
					}
					d := agents.Declared(dir, c.Stack)
					rs := agents.Conform(context.Background(), agents.Subject{Name: c.Name(def), Spec: spec, Target: name, Driver: driver, Rows: rows, Server: srv,
						NoTLS: agents.NoTLS(dir, c.Stack, family(name), tt.Agents), NoConnect: cmp.Or(agents.NoConnect(dir, c.Stack, family(name)), agents.ModelNoConnect(dir, c.Stack, c.Model)),
						Declared: &d, Model: c.Model})
					if len(rs) != len(agents.Checks()) {
						t.Fatalf("%d results for %d checks", len(rs), len(agents.Checks()))
					}
					for _, r := range rs {
						t.Log(r.Line())
					}
					check(t, c, rs)
				})
			}
		})
	}
}

// brokenAgent says a hello, and answers every request with a line that
// is not JSON.
const brokenAgent = `echo '{"type":"hello","protocol":1,"language":"sh","runtime_version":"1","library":"none","library_version":"0"}'
while read -r line; do echo 'not an answer'; done
`

// TestConformanceOfStacksAddedByDirectory: the suite runs over whatever
// stack directories an agents directory holds, found by reading it: here
// docs/agents.md's own example agent, copied with a stack.json of its
// own, which passes every check that applies to it (protocol 1: no load,
// no connect scenario, no TLS), and a broken agent, which fails from its
// first open on, saying what it did.
func TestConformanceOfStacksAddedByDirectory(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer agents.SetInstallLog(&strings.Builder{})()
	writeStack(t, dir, "example", `{"language": "Python", "order": 1, "runtime": ["/usr/bin/python3"], "command": ["agent.py"], "packages": ["python3"],
		"libraries": {"redis-py": ["python3-redis"]}, "families": {"redis": {"libraries": ["redis-py"]}}}`, map[string]string{"agent.py": docExample(t)})
	writeStack(t, dir, "broken", `{"language": "sh", "order": 2, "runtime": ["/bin/sh"], "command": ["agent.sh"], "packages": [],
		"libraries": {"none": []}, "families": {"redis": {"libraries": ["none"]}}}`, map[string]string{"agent.sh": brokenAgent})
	claims, err := agents.Claims(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Each claims every target of the family it names: the tests' own
	// alias of Redis too (TestTargetOfAKnownFamily runs it).
	if want := []agents.Claim{{Stack: "example", Target: "redis", Library: "redis-py"}, {Stack: "example", Target: aliasTarget, Library: "redis-py"},
		{Stack: "broken", Target: "redis", Library: "none"}, {Stack: "broken", Target: aliasTarget, Library: "none"}}; !slices.Equal(claims, want) {
		t.Fatalf("claims %+v; want %+v", claims, want)
	}
	claims = withoutAlias(claims)
	if err := agents.Installed(dir); err != nil {
		needStack(t, err)
	}
	ran := map[string]bool{}
	conformClaims(t, dir, claims, func(t *testing.T, c agents.Claim, rs []agents.Result) {
		ran[c.Stack] = true
		byCheck := map[string]agents.Result{}
		for _, r := range rs {
			byCheck[r.Check] = r
		}
		if c.Stack == "example" {
			for _, r := range rs {
				if r.Failed() || (r.Skipped != "" && slices.Contains(mustPass, r.Check)) {
					t.Errorf("docs/agents.md's example: %s", r.Line())
				}
			}
			if r := byCheck["load"]; r.Skipped == "" || !strings.Contains(r.Skipped, "protocol 1") {
				t.Errorf("a protocol 1 agent's load: %s; want it not run, saying why", r.Line())
			}
			return
		}
		if r := byCheck["hello"]; r.Failed() {
			t.Errorf("the broken agent's hello: %s", r.Line())
		}
		r := byCheck["open tcp"]
		if !r.Failed() || !strings.Contains(r.Err.Error(), "it answered garbage as its answer to open") || !strings.Contains(r.Line(), `"not an answer"`) {
			t.Errorf("the broken agent's open: %s; want it failed, quoting its garbage", r.Line())
		}
		if !strings.HasPrefix(r.Line(), "FAIL redis from broken: open tcp: ") {
			t.Errorf("a failure's line %q", r.Line())
		}
	})
	if !ran["example"] || !ran["broken"] {
		t.Errorf("the suite ran on %v; want example and broken", ran)
	}
}

// docExample is the first Python block of docs/agents.md: the complete
// agent, as a user copies it.
func docExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	m := pythonBlock.FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/agents.md has no Python code block")
	}
	return string(m[1])
}

// TestChecksInDocs: docs/agents.md's table of the checks has a row for
// each, saying what it asks as the suite does.
func TestChecksInDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range agents.Checks() {
		if row := "| `" + c.Name + "` | " + c.Asks + " |"; !strings.Contains(string(b), row) {
			t.Errorf("docs/agents.md has no row %q for the check %s", row, c.Name)
		}
	}
}
