package stackfile

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadRefuses: a stack.json with a field dbsock does not know, a
// reserved or bad directory name, a family's library it does not list,
// a bad family name, the old "targets" key (saying what replaced it),
// or no command is refused, naming its file and what is wrong.
func TestLoadRefuses(t *testing.T) {
	ok := `{"language": "X", "command": ["a"], "packages": [], "libraries": {"l": []}, "families": {"redis": {"libraries": ["l"]}}}`
	for name, tc := range map[string]struct{ dir, json, want string }{
		"unknown field": {"x", strings.Replace(ok, `"packages"`, `"pakages"`, 1), `unknown field "pakages"`},
		"reserved":      {"go", ok, `its directory's name "go" is not a stack's`},
		"bad name":      {"Py", ok, `its directory's name "Py" is not a stack's`},
		"library":       {"x", strings.Replace(ok, `["l"]}}`, `["m"]}}`, 1), `family redis's library "m" is not among its libraries`},
		"no command":    {"x", strings.Replace(ok, `["a"]`, `[]`, 1), "no command"},
		"package":       {"x", strings.Replace(ok, `"packages": []`, `"packages": ["a b"]`, 1), `"a b" is not a Debian package's name`},
		"no library":    {"x", strings.Replace(ok, `{"libraries": ["l"]}`, `{"libraries": []}`, 1), "family redis has no library, and says not why (missing)"},
		"both":          {"x", strings.Replace(ok, `["l"]}`, `["l"], "missing": "why"}`, 1), "family redis has libraries and says why it has none"},
		"old key":       {"x", strings.Replace(ok, `"families"`, `"targets"`, 1), `not by targets`},
		"family":        {"x", strings.Replace(ok, `"redis"`, `"Redis"`, 1), `family "Redis" is not a protocol family's name`},
		"workers":       {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "workers": "fibers"`, 1), `workers "fibers" is not a worker model (threads, processes, event-loop)`},
		"models":        {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "models": ["threads", "fibers"]`, 1), `workers "fibers" is not a worker model`},
		"model twice":   {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "models": ["threads", "threads"]`, 1), `or is given twice`},
		"workers and models": {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "workers": "threads", "models": ["threads"]`, 1),
			"both workers and models"},
		"default limited": {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "models": ["threads"], "model_limits": {"threads": {"no_connect": "x"}}`, 1),
			`model_limits names "threads", which is not one of its models after the first`},
		"limit library": {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "models": ["threads", "event-loop"], "model_limits": {"event-loop": {"libraries": ["m"], "missing": "why"}}`, 1),
			`model_limits event-loop's library "m" is not among its libraries`},
		"limit why": {"x", strings.Replace(ok, `"packages": []`, `"packages": [], "models": ["threads", "event-loop"], "model_limits": {"event-loop": {"libraries": ["l"]}}`, 1),
			"says not why it runs no others (missing)"},
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

// TestModels: a stack's worker models are its models, the first the
// default (or its workers alone), another one is asked for with
// --workers, and a model limited to some libraries says why not the
// others.
func TestModels(t *testing.T) {
	s := Stack{Models: []string{"threads", "event-loop"}, ModelLimits: map[string]ModelLimit{"event-loop": {Libraries: []string{"a"}, Missing: "no async"}}}
	if s.DefaultModel() != "threads" || len(s.AllModels()) != 2 {
		t.Errorf("models %v, default %q", s.AllModels(), s.DefaultModel())
	}
	if a := s.ModelArgs("event-loop"); strings.Join(a, " ") != "--workers event-loop" || s.ModelArgs("threads") != nil || s.ModelArgs("") != nil {
		t.Errorf("model args %v %v", a, s.ModelArgs("threads"))
	}
	if s.ModelMissing("event-loop", "a") != "" || s.ModelMissing("event-loop", "b") != "no async" || s.ModelMissing("threads", "b") != "" {
		t.Error("model limits not read")
	}
	old := Stack{Workers: "processes"}
	if old.DefaultModel() != "processes" || len(old.AllModels()) != 1 || (Stack{}).DefaultModel() != "" {
		t.Errorf("workers alone: %v", old.AllModels())
	}
}
