package agents_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/agents/stackfile"
)

// writeStack writes stack name's stack.json and files under the agents
// directory dir.
func writeStack(t *testing.T, dir, name, stackJSON string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	files = mapWith(files, stackfile.Name, stackJSON)
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mapWith(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

// TestEmbeddedStacks: dbsock's binary carries the stacks c, python, node,
// php, ruby and java, each with every file of its directory that is its own (the
// embed line and stackfile.Patterns agree), and no build output.
func TestEmbeddedStacks(t *testing.T) {
	if got, err := agents.Stacks(""); err != nil || strings.Join(got, ",") != "c,python,node,php,ruby,java" {
		t.Fatalf("embedded stacks %q, %v; want c,python,node,php,ruby,java", got, err)
	}
	here, err := stackfile.Load(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range here {
		onDisk, err := stackfile.Files(os.DirFS("."), s)
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := stackfile.Files(agents.Embedded(), s)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(onDisk, embedded) {
			t.Errorf("%s: the files of its directory %q, embedded %q: add their kind to agents/catalog.go's embed line and stackfile.Patterns", s.Name, onDisk, embedded)
		}
		entries, _ := os.ReadDir(s.Name)
		for _, e := range entries {
			if !e.IsDir() && !stackfile.Own(e.Name()) && !strings.HasPrefix(e.Name(), ".") {
				if _, err := fs.Stat(agents.Embedded(), s.Name+"/"+e.Name()); err == nil {
					t.Errorf("%s/%s is embedded, though not a stack's own file", s.Name, e.Name())
				}
			}
		}
	}
}

// miniStack is a stack whose agent is a shell script that says hello.
const miniStack = `{"language": "Mini", "order": 9, "runtime": ["/bin/sh"], "command": ["agent.sh"], "packages": [],
	"libraries": {"echoes": []}, "families": {"redis": {"libraries": ["echoes"]}}}`

// TestStackAddedByDirectory: a stack is added by a directory of its own
// in an agents directory (here beside a copy of nothing else): its first
// use installs it into the user's cache, saying so, and its agent starts
// from there with the target and its default library as its arguments.
func TestStackAddedByDirectory(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	writeStack(t, dir, "mini", miniStack, map[string]string{
		"agent.sh":  `echo '{"type":"hello","protocol":1,"language":"mini","runtime_version":"1","library":"'"$2"'","library_version":"0"}'; read -r line`,
		"notes.txt": "not one of the stack's own files",
	})
	var log strings.Builder
	defer agents.SetInstallLog(&log)()
	if got, err := agents.Stacks(dir); err != nil || !slices.Equal(got, []string{"mini"}) {
		t.Fatalf("stacks %q, %v", got, err)
	}
	spec, err := agents.For(dir, "mini", "redis", "redis", "")
	if err != nil {
		t.Fatal(err)
	}
	inst := filepath.Dir(spec.Argv[1])
	if spec.Argv[0] != "/bin/sh" || !strings.HasPrefix(inst, filepath.Join(cache, "dbsock", "agents")+"/") || !slices.Equal(spec.Argv[2:], []string{"redis", "echoes"}) {
		t.Errorf("argv %q; want /bin/sh, agent.sh in the cache, redis echoes", spec.Argv)
	}
	if _, err := os.Stat(filepath.Join(inst, "notes.txt")); err == nil {
		t.Error("a file that is not the stack's own was installed")
	}
	if !strings.Contains(log.String(), "dbsock: installing the mini stack's agent into "+inst+", from "+dir) {
		t.Errorf("the install said %q", log.String())
	}
	a, err := agents.Start(context.Background(), spec, startLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if h := a.Hello(); h.Language != "mini" || h.Library != "echoes" {
		t.Errorf("hello %+v", h)
	}
	if _, err := agents.For(dir, "mini", "postgres", "postgres", ""); err == nil || !strings.Contains(err.Error(), "the mini agent has no client library for postgres") {
		t.Errorf("a target it does not declare: %v", err)
	}
}

// TestInstallSaysWhatIsMissing: a stack whose Debian packages are not
// installed, or whose unpacked packages were not downloaded, or whose
// runtime is not here, is refused with what is missing and how to get it.
func TestInstallSaysWhatIsMissing(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer agents.SetInstallLog(&strings.Builder{})()
	dir := t.TempDir()
	lib := `"libraries": {"l": []}, "families": {"redis": {"libraries": ["l"]}}`
	writeStack(t, dir, "noruntime", `{"language": "X", "runtime": ["/nonexistent/x"], "command": ["a.py"], "packages": [], `+lib+`}`, map[string]string{"a.py": ""})
	writeStack(t, dir, "nodebs", `{"language": "X", "command": ["a.js"], "packages": [], "unpack": {"packages": ["node-dbsock-none"], "within": "node-", "env": {}}, `+lib+`}`, map[string]string{"a.js": ""})
	cases := map[string]string{
		"noruntime": "the noruntime stack's agent runs on /nonexistent/x, and none is here",
		"nodebs":    "Debian's node-dbsock-none (and the node-* packages they depend on) are not downloaded into " + filepath.Join(stackfile.DebsDir, "nodebs") + ": scripts/install-deps.sh --with-stacks",
	}
	if _, err := os.Stat("/usr/bin/dpkg-query"); err == nil {
		writeStack(t, dir, "nopkg", `{"language": "X", "command": ["a.py"], "packages": ["dbsock-no-such-package"], `+lib+`}`, map[string]string{"a.py": ""})
		cases["nopkg"] = "it needs Debian's dbsock-no-such-package, not installed here: as root, apt-get install dbsock-no-such-package"
	}
	for stack, want := range cases {
		if _, err := agents.For(dir, stack, "redis", "redis", ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q in it", stack, err, want)
		}
	}
}
