package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestAgentHelloEscapedInTheLog: what an agent's hello says of itself (its
// library, its mode) reaches dbsock's stderr as visible text wherever it
// is logged, escaped as error lines are: no terminal escape sequence (a
// title, a screen clear, a colour) and no line of its own that would read
// as dbsock's. The agent is the docs' one, its hello made hostile.
func TestAgentHelloEscapedInTheLog(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	file := docAgent(t)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.Replace(string(src), `"library": "redis-py"`,
		`"library": "redis-py\x1b]0;owned\x07\x1b[2J\ndbsock: redis: forged line\x1b[31m", "mode": "resp2\x1b[H\ndbsock: forged mode"`, 1)
	if hostile == string(src) {
		t.Fatal(`the docs' agent no longer says "library": "redis-py" in its hello`)
	}
	if err := os.WriteFile(file, []byte(hostile), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := dbsock(t, "run", "redis", "--clients", "cmd:/usr/bin/python3 "+file, "--provider", "local",
		"--n", "300", "--instances", "1", "--warmup", "50", "--format", "json", "--out", filepath.Join(t.TempDir(), "r.json"))
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if strings.ContainsAny(stderr, "\x1b\x07") {
		t.Errorf("stderr carries the hello's escape sequences:\n%q", stderr)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "dbsock: redis: forged") || strings.HasPrefix(line, "dbsock: forged") {
			t.Errorf("a line of the hello's own on stderr: %q", line)
		}
	}
	for _, want := range []string{`redis-py\x1b]0;owned\x07\x1b[2J; dbsock: redis: forged line\x1b[31m`, `resp2\x1b[H; dbsock: forged mode`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not show %s as text:\n%s", want, stderr)
		}
	}
}
