package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/agents/stackfile"
	"github.com/dbsock/dbsock/internal/testutil"
)

// copyAgents copies each stack's own files of ../../agents into a new
// agents directory.
func copyAgents(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := os.DirFS("../../agents")
	stacks, err := stackfile.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stacks {
		files, err := stackfile.Files(src, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, s.Name), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join("../../agents", s.Name, f))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, s.Name, f), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestStackAddedByDirectory: a stack added as a directory of its own to
// a copy of agents/ (its stack.json and its agent, here Python's agent
// under another name, declaring the echo target alone), pointed at by
// DBSOCK_AGENTS_DIR, is one --clients takes and --help lists: dbsock
// installs it at its first use and measures echo from it, every
// connection verified on the server side, and says that it has no library
// for redis. No Go file names it.
func TestStackAddedByDirectory(t *testing.T) {
	testutil.NeedAny(t, "python3")
	if testing.Short() {
		t.Skip("runs dbsock's echo server; skipped with -short")
	}
	dir := copyAgents(t)
	mini := filepath.Join(dir, "mini")
	if err := os.MkdirAll(mini, 0o755); err != nil {
		t.Fatal(err)
	}
	stack := `{"language": "Mini Python", "order": 9, "runtime": ["/usr/bin/python3"], "command": ["agent.py"], "packages": ["python3"],
		"libraries": {"socket": []}, "families": {"pingpong": {"libraries": ["socket"]}}}`
	var err error
	for _, f := range []string{"agent.py", "agent_workers.py", "backend_pingpong.py"} { // the Python agent's core, and its one backend
		var b []byte
		if b, err = os.ReadFile(filepath.Join("../../agents/python", f)); err == nil {
			err = os.WriteFile(filepath.Join(mini, f), b, 0o644)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(mini, "stack.json"), []byte(stack), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(agents.DirEnv, dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if _, out, _ := dbsock(t, "run", "--help"); !strings.Contains(out, "go (dbsock's own Go drivers), c, python, node, php, ruby, java, mini (") {
		t.Errorf("--help does not list the mini stack:\n%s", out)
	}
	rep, out := runClients(t, "run", "echo", "--clients", "go,mini", "--provider", "local", "--format", "json", "--n", "300", "--instances", "1", "--warmup", "100")
	if len(rep.Summary) != 2 || rep.Summary[1].Stack != "mini" || rep.Summary[1].Client == nil || rep.Summary[1].Client.Library != "socket" {
		t.Fatalf("cases %+v; want echo from go and from mini (socket)", rep.Summary)
	}
	checkClientRuns(t, rep)
	if !strings.Contains(out, `"stack": "mini"`) {
		t.Error("no run from the mini stack in the JSON")
	}
	code, _, stderr := dbsock(t, "run", "redis", "--clients", "mini", "--provider", "local", "--n", "300", "--instances", "1")
	if code != 2 || !strings.Contains(stderr, "redis from mini: the mini agent has no client library for redis") {
		t.Errorf("redis from mini alone: exit %d, %s; want 2 and that mini has no library for redis", code, stderr)
	}
}

// TestInstalledDbsockMeasuresEveryStack: a dbsock built with go install
// into a GOBIN of its own, run from another directory with an empty cache
// (XDG_CACHE_HOME), measures redis from Python, PHP, C, Node.js and Ruby: it
// installs each stack's agent from the sources in its binary into the
// cache, saying so, and every connection of each is verified on the
// server side.
func TestInstalledDbsockMeasuresEveryStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dbsock and runs Redis; skipped with -short")
	}
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	gobin, work, cache := t.TempDir(), t.TempDir(), t.TempDir()
	install := exec.Command("go", "install", "./cmd/dbsock")
	install.Dir = "../.."
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/dbsock: %v\n%s", err, out)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, agents.DirEnv+"=") })
	stacks := []string{"python", "php", "c", "node", "ruby"}
	run := exec.Command(filepath.Join(gobin, "dbsock"), "run", "redis", "--clients", strings.Join(stacks, ","), "--provider", "local",
		"--n", "300", "--instances", "1", "--format", "json")
	run.Dir, run.Env = work, append(env, "XDG_CACHE_HOME="+cache)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("dbsock run redis --clients %s from %s: %v\n%s", strings.Join(stacks, ","), work, err, stderr.String())
	}
	var rep clientsJSON
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	checkClientRuns(t, rep)
	compared := map[string]bool{}
	for _, c := range rep.Summary {
		compared[c.Stack] = len(c.Comparisons) == 1 && c.Comparisons[0].SpeedupP50 > 0
	}
	for _, s := range stacks {
		if !compared[s] {
			t.Errorf("no compared case of redis from %s", s)
		}
		want := "dbsock: installing the " + s + " stack's agent into " + filepath.Join(cache, "dbsock", "agents") + "/"
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if len(rep.Runs) == 0 {
		t.Fatal("no runs")
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "dbsock", "agents", "*", "c", "dbsock-agent")); len(m) != 1 {
		t.Errorf("the C agent built in the cache: %q", m)
	}
}
