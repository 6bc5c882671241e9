package agents_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
)

var pythonBlock = regexp.MustCompile("(?s)```python\n(.*?)```")

// TestDocExampleAgent: the first Python block of docs/agents.md, which
// mentions --clients cmd:, is a complete agent of at most 60 lines: copied
// verbatim, it opens a connection over tcp and one over the socket to a
// real Redis, both verified on the server side, runs a block and the
// overhead request, and exits when its stdin closes.
func TestDocExampleAgent(t *testing.T) {
	b, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "--clients cmd:") {
		t.Error("docs/agents.md does not mention --clients cmd:")
	}
	m := pythonBlock.FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/agents.md has no Python code block")
	}
	if n := strings.Count(string(m[1]), "\n"); n > 60 {
		t.Errorf("the example agent has %d lines; at most 60", n)
	}
	testutil.NeedAny(t, "redis-server")
	file := filepath.Join(t.TempDir(), "agent.py")
	if err := os.WriteFile(file, m[1], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	srv, driver := startSeeded(t, "redis")
	spec := agents.Spec{Stack: "cmd", Argv: []string{"/usr/bin/python3", file, "redis"}}
	tg := target{name: "redis", key: func(id int64) any { return drivers.KeyName(id) }}
	runStack(t, "cmd", spec, srv, driver.(drivers.ConnFinder), tg, driver.ValueSize())
}

// TestStacksFor: each stack's agent runs from where its first use
// installed it, in the cache, with the target's protocol family (a
// pooler's is its database's) and the library, its default when none
// is asked for; an unknown stack is refused with the ones there are.
func TestStacksFor(t *testing.T) {
	if _, err := agents.For(".", "cobol", "redis", "redis", ""); err == nil || !strings.Contains(err.Error(), "c, python, node, php") {
		t.Errorf("an unknown stack: %v", err)
	}
	s, err := agents.For(".", "python", "pgbouncer", family("pgbouncer"), "") // started with its protocol family, postgres
	if err != nil {
		needStack(t, err)
	}
	cache, err := agents.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Argv) != 4 || s.Argv[0] != "/usr/bin/python3" || !strings.HasPrefix(s.Argv[1], cache+"/") || !strings.HasSuffix(s.Argv[1], "/python/agent.py") ||
		strings.Join(s.Argv[2:], " ") != "postgres psycopg2" {
		t.Errorf("python's argv for pgbouncer %q, want /usr/bin/python3, its agent.py in %s, postgres psycopg2 (the family, not the target)", s.Argv, cache)
	}
}
