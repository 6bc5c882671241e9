package stackfile

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadRefuses: a stack.json with a field dbsock does not know, a
// reserved or bad directory name, a target's library it does not list,
// or no command is refused, naming its file and what is wrong.
func TestLoadRefuses(t *testing.T) {
	ok := `{"language": "X", "command": ["a"], "packages": [], "libraries": {"l": []}, "targets": {"redis": {"libraries": ["l"]}}}`
	for name, tc := range map[string]struct{ dir, json, want string }{
		"unknown field": {"x", strings.Replace(ok, `"packages"`, `"pakages"`, 1), `unknown field "pakages"`},
		"reserved":      {"go", ok, `its directory's name "go" is not a stack's`},
		"bad name":      {"Py", ok, `its directory's name "Py" is not a stack's`},
		"library":       {"x", strings.Replace(ok, `["l"]}}`, `["m"]}}`, 1), `target redis's library "m" is not among its libraries`},
		"no command":    {"x", strings.Replace(ok, `["a"]`, `[]`, 1), "no command"},
		"package":       {"x", strings.Replace(ok, `"packages": []`, `"packages": ["a b"]`, 1), `"a b" is not a Debian package's name`},
		"no library":    {"x", strings.Replace(ok, `{"libraries": ["l"]}`, `{"libraries": []}`, 1), "target redis has no library, and says not why (missing)"},
		"both":          {"x", strings.Replace(ok, `["l"]}`, `["l"], "missing": "why"}`, 1), "target redis has libraries and says why it has none"},
		"workers":       {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "workers": "fibers"`, 1), `workers "fibers" is not a worker model (threads, processes, event-loop)`},
	} {
		_, err := Load(fstest.MapFS{tc.dir + "/stack.json": {Data: []byte(tc.json)}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.dir+"/stack.json") {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
	stacks, err := Load(fstest.MapFS{"b/stack.json": {Data: []byte(ok)}, "a/stack.json": {Data: []byte(ok)}, "b/agent.py": {}, "b/agent": {}})
	if err != nil || len(stacks) != 2 || stacks[0].Name != "a" {
		t.Fatalf("two stacks: %v, %v", stacks, err)
	}
}
