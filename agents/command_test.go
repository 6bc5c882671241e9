package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// argsScript writes an executable that prints each of its arguments on
// a line of its own, and returns its path.
func argsScript(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCommandArgv: a user's command is split as the shell splits it
// (quotes, commas, a comment, a trailing ;), its executable found, and
// the target is one more argument that no shell reads: a target that
// is shell syntax reaches the agent as it is.
func TestCommandArgv(t *testing.T) {
	script := argsScript(t, "agent")
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on PATH")
	}
	const target = `redis;touch x "$(id)"`
	for _, tc := range []struct {
		command string
		want    []string
	}{
		{`/usr/bin/python3 "/tmp/x.py"`, []string{"/usr/bin/python3", "/tmp/x.py", target}},
		{`/usr/bin/python3 /tmp/x.py --a=1,2`, []string{"/usr/bin/python3", "/tmp/x.py", "--a=1,2", target}},
		{script + " #", []string{script, target}},
		{"true;", []string{truePath, target}},
		{script + ` 'two words' "a \"b\""`, []string{script, "two words", `a "b"`, target}},
	} {
		spec, err := Command(tc.command, target)
		if err != nil || !slices.Equal(spec.Argv, tc.want) {
			t.Errorf("Command(%q): argv %q, %v; want %q", tc.command, spec.Argv, err, tc.want)
		}
	}
	spec, err := Command(script+" --a=1,2", target)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(spec.Argv[0], spec.Argv[1:]...).Output()
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); err != nil || !slices.Equal(got, []string{"--a=1,2", target}) {
		t.Errorf("the agent got %q (%v); want --a=1,2 and the target as it is", got, err)
	}
}

// TestCommandShell: a command that needs a shell runs by /bin/sh -c with
// the target as $1 (by exec when it is one command), and reaches it as
// it is.
func TestCommandShell(t *testing.T) {
	script := argsScript(t, "agent")
	const target = "redis; echo pwned"
	spec, err := Command(`cd / && `+script+` "$1" x`, target)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Argv[0] != Shell || spec.Argv[len(spec.Argv)-1] != target {
		t.Fatalf("argv %q: want %s -c COMMAND sh TARGET", spec.Argv, Shell)
	}
	out, err := exec.Command(spec.Argv[0], spec.Argv[1:]...).Output()
	if string(out) != target+"\nx\n" || err != nil {
		t.Errorf("the agent got %q (%v)", out, err)
	}
	spec, err = Command(script+` "$@"`, target)
	if err != nil || spec.Argv[2] != "exec "+script+` "$@"` {
		t.Errorf("one command that needs a shell: argv %q, %v; want it run by exec", spec.Argv, err)
	}
}

// TestCommandRefused: what cannot be run is an error saying why, before
// anything starts.
func TestCommandRefused(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.py")
	if err := os.WriteFile(plain, []byte("print(1)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ command, want string }{
		{"   ", "the command is empty"},
		{"# only a comment", "no command"},
		{`/usr/bin/python3 "/tmp/x.py`, "without closing quote"},
		{"dbsock-no-such-agent x", "dbsock-no-such-agent is not an executable found on PATH"},
		{filepath.Join(dir, "missing") + " x", "cannot be run: no such file or directory"},
		{dir, "is a directory"},
		{plain, "is not executable"},
		{"cd /srv && ./agent", `write "$1" where the target goes`},
		{"agent > /tmp/log", `write "$1" where the target goes`},
	} {
		if _, err := Command(tc.command, "redis"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Command(%q): %v; want an error with %q", tc.command, err, tc.want)
		}
	}
}
