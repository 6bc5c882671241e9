package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// agentReadyDriver is a fakeDriver that an agent could measure: it can
// find another process's connection and says its lookup as data.
type agentReadyDriver struct{ fakeDriver }

func (*agentReadyDriver) OpenFinder(context.Context, drivers.Endpoint) (drivers.Finder, error) {
	return nil, nil
}
func (*agentReadyDriver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Family: "memcached", Key: func(id int64) any { return id }}
}

// agentTarget is a target "memcached" of d with what its registration
// tells the agents: no agent verified on tls (the stacks' own stack.json
// give python and c a library for it, node none).
func agentTarget(d drivers.Driver) *targets.Target {
	return &targets.Target{Target: supply.Target{Name: "memcached"}, Settings: targets.Own(func(int) drivers.Driver { return d }),
		Agents: &agents.Support{NoTLS: "memcached's stats conns does not say whether another connection is encrypted"}}
}

// TestClientSkipReasons: a target is skipped from a stack, with the
// reason, when dbsock cannot verify an agent's connection to it, when the
// stack has no library for it, and when the stack is not installed; Go
// is never skipped; a run in which nothing is measurable is refused
// before it starts, naming every reason.
func TestClientSkipReasons(t *testing.T) {
	memcached := &agentReadyDriver{fakeDriver{name: "memcached"}}
	floor := &fakeDriver{name: "floor"}
	pl := plan(&fakeProvider{}, floor)
	pl.Targets = append(pl.Targets, agentTarget(memcached))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	pl.Client.AgentsDir = agentsWithout(t, "/nonexistent/python3") // python's runtime is not here
	floorT, memcachedT := pl.Targets[0], pl.Targets[1]
	for _, tt := range []struct {
		target *targets.Target
		stack  string
		want   string
	}{
		{floorT, "go", ""},
		{memcachedT, "go", ""},
		{floorT, "python", "no agent measures floor: dbsock cannot list another process's connections on its server, so it could not verify an agent's route there"},
		{memcachedT, "node", "the node agent has no client library for memcached: Debian packages no Node.js memcached client (no memcached or memjs module among its node-* packages)"},
		{memcachedT, "python:pylibmc", `the python agent has no client library "pylibmc" for memcached (it has pymemcache)`},
		{memcachedT, "python", "the python stack's agent runs on /nonexistent/python3, and none is here: install it (scripts/install-deps.sh --with-stacks, as root in dbsock's checkout, installs every stack's)"},
	} {
		if got := pl.skipReason(tt.target, tt.stack); got != tt.want {
			t.Errorf("%s from %s: skip reason %q, want %q", tt.target.Name, tt.stack, got, tt.want)
		}
	}
	pl.Client.Stacks = []string{"go", "node", "python"}
	if err := pl.Validate(); err != nil {
		t.Errorf("a run with go is measurable: %v", err)
	}
	pl.Client.Stacks = []string{"node", "python"}
	err := pl.Validate()
	for _, want := range []string{"Plan.Client.Stacks node,python: nothing to measure", "floor from node: no agent measures floor",
		"memcached from node: the node agent has no client library for memcached", "memcached from python: the python stack's agent runs on /nonexistent/python3"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want %q in it", err, want)
		}
	}
}

// TestClientWithoutTLS: a stack whose agent has no TLS to a target is
// measured on the other paths, and skipped when tls is the baseline.
func TestClientWithoutTLS(t *testing.T) {
	paths := drivers.Paths{{Transport: drivers.TCP}, {Transport: drivers.TLS}, {Transport: drivers.Unix}}
	if got := (stackClient{noTLS: true}).paths(paths); len(got) != 2 || got[0].Transport != drivers.TCP || got[1].Transport != drivers.Unix {
		t.Errorf("paths without tls: %v", got)
	}
	if got := (stackClient{}).paths(paths); len(got) != 3 {
		t.Errorf("paths with tls: %v", got)
	}
	memcached := &agentReadyDriver{fakeDriver{name: "memcached"}}
	pl := plan(&fakeProvider{})
	pl.Targets = append(pl.Targets, agentTarget(memcached))
	pl.Paths, pl.Baseline = []drivers.Transport{drivers.TCP, drivers.TLS, drivers.Unix}, drivers.TLS
	if got, want := pl.skipReason(pl.Targets[0], "c"), "its baseline, tls, is not measured from it: memcached's stats conns does not say whether another connection is encrypted"; !strings.HasPrefix(got, want) {
		t.Errorf("skip reason %q, want %q...", got, want)
	}
}

// TestTotalOpsCountsMeasuredStacks: the progress bar's total counts each
// (target, stack) that is measured, not the ones skipped.
func TestTotalOpsCountsMeasuredStacks(t *testing.T) {
	memcached := &agentReadyDriver{fakeDriver{name: "memcached"}}
	pl := plan(&fakeProvider{}, &fakeDriver{name: "floor"})
	pl.Targets = append(pl.Targets, agentTarget(memcached))
	one := pl.TotalOps() / 2 // two targets from go
	pl.Client.Stacks = []string{"go", "node"}
	if got := pl.TotalOps(); got != 2*one {
		t.Errorf("TotalOps %d with node skipped for both targets, want %d", got, 2*one)
	}
}

// TestStacksShareEachInstance: the client stacks of a case run on the
// same server instances, one after another on each, in an order that
// rotates from one instance to the next.
func TestStacksShareEachInstance(t *testing.T) {
	p := Plan{Instances: 3}
	var got []string
	var loops []caseLoop
	for _, name := range []string{"go", "c", "python"} {
		loops = append(loops, func(_ context.Context, _ scenarios.Case, in scenarios.Instance, _ func(results.Run)) error {
			got = append(got, fmt.Sprintf("%d:%s", in.Number, name))
			return nil
		})
	}
	ti := &results.Target{}
	tr := &targetRun{t: agentTarget(&agentReadyDriver{}), srv: &supply.Server{}, ti: ti}
	if err := p.measureCase(context.Background(), tr, &agentReadyDriver{}, scenarios.Case{}, loops, nil); err != nil {
		t.Fatal(err)
	}
	want := "1:go 1:c 1:python 2:c 2:python 2:go 3:python 3:go 3:c"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("the stacks ran in the order %s; want %s", s, want)
	}
	if len(ti.Warnings) != 1 || !strings.Contains(ti.Warnings[0].String(), "could not restart it") {
		t.Errorf("a server dbsock cannot restart: warnings %q; want the one saying its instances are fresh connections", ti.Warnings)
	}
}

// TestCmdStackNamed: a cmd: agent's stack is named cmd (a second one
// cmd2) in reports and thresholds, and its target is an argument of its
// own that no shell reads, even after a command that ends in ; or #.
func TestCmdStackNamed(t *testing.T) {
	stacks := []string{"go", "cmd:/bin/cat", "python", "cmd:/bin/cat -u"}
	for c, want := range map[string]string{"go": "go", "python": "python", "cmd:/bin/cat": "cmd", "cmd:/bin/cat -u": "cmd2"} {
		if got := StackName(stacks, c); got != want {
			t.Errorf("StackName(%q) = %q; want %q", c, got, want)
		}
	}
	for _, command := range []string{"true;", "/bin/cat #"} {
		spec, err := Plan{}.agentSpec(CmdClient+":"+command, &targets.Target{Target: supply.Target{Name: "redis"}})
		if err != nil || len(spec.Argv) != 2 || spec.Argv[1] != "redis" || spec.Argv[0] == agents.Shell {
			t.Errorf("cmd:%s: argv %q (%v); want its executable run with redis as its one argument", command, spec.Argv, err)
		}
	}
}

// agentsWithout is an agents directory with dbsock's stacks node and
// python, python's runtime being runtime.
func agentsWithout(t *testing.T, runtime string) string {
	t.Helper()
	dir := t.TempDir()
	for _, stack := range []string{"node", "python"} {
		if err := os.MkdirAll(filepath.Join(dir, stack), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("..", "agents", stack, "stack.json"))
		if err == nil && stack == "python" {
			b = []byte(strings.Replace(string(b), `"/usr/bin/python3"`, strconv.Quote(runtime), 1))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, stack, "stack.json"), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestStackWithoutWorkersRefusedAtLoad: a stack whose stack.json names no
// worker model runs one connection at a time, closed loop: a run at load
// from it is refused before anything starts, naming the stack; at rest
// it is not.
// TestStackWithoutConnectRefused: a stack whose stack.json does not say
// it times the connect scenario is refused it before the run.
func TestStackWithoutConnectRefused(t *testing.T) {
	dir := agentsWithout(t, "/usr/bin/python3")
	b, err := os.ReadFile(filepath.Join(dir, "python", "stack.json"))
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"connect": true,`, "", 1))
	if err := os.WriteFile(filepath.Join(dir, "python", "stack.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	pl := plan(&fakeProvider{}, &fakeDriver{name: "redis"})
	pl.Client.AgentsDir, pl.Client.Stacks = dir, []string{"go", "python"}
	pl.Sweep.Scenarios = []string{scenarios.Connect}
	err = pl.validateAgentRun()
	if err == nil || !strings.Contains(err.Error(), "the python agent measures lookups on open connections only (its stack.json does not say connect)") {
		t.Errorf("connect: %v", err)
	}
}

func TestStackWithoutWorkersRefusedAtLoad(t *testing.T) {
	dir := agentsWithout(t, "/usr/bin/python3")
	b, err := os.ReadFile(filepath.Join(dir, "python", "stack.json"))
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"workers": "processes",`, "", 1))
	if err := os.WriteFile(filepath.Join(dir, "python", "stack.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	pl := plan(&fakeProvider{}, &fakeDriver{name: "redis"})
	pl.Client.AgentsDir, pl.Client.Stacks = dir, []string{"go", "python"}
	if err := pl.validateAgentRun(); err != nil {
		t.Errorf("at rest: %v", err)
	}
	pl.Loop.Rate = 1000
	err = pl.validateAgentRun()
	if err == nil || !strings.Contains(err.Error(), "the python agent measures one connection at a time, closed loop (its stack.json names no workers)") {
		t.Errorf("at a rate: %v", err)
	}
}
