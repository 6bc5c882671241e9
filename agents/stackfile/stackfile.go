// Package stackfile reads the declaration of a client stack, the
// stack.json of its directory under agents/ (docs/agents.md): its
// agent's command, how it is installed, the Debian packages it needs, its
// libraries and the protocol families (of servers) each speaks. It needs nothing but the
// standard library, so that scripts/install-deps.sh can list the stacks'
// packages with `go run ./agents/stackfile/packages` before anything else
// is built.
package stackfile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Name is the file that declares a stack in its directory.
const Name = "stack.json"

// DebsDir is where scripts/install-deps.sh --with-stacks puts the Debian
// packages a stack unpacks rather than installs (Unpack), one directory
// per stack: dbsock unpacks them from there into the user's cache.
const DebsDir = "/var/cache/dbsock/debs"

// Patterns are the files of a stack's directory that are its own: what
// dbsock embeds and copies to where it installs the stack (package
// agents' embed line lists the same).
var Patterns = []string{Name, "Makefile", "*.c", "*.h", "*.py", "*.js", "*.php", "*.rb", "*.java", "*.sh"}

// Stack is one stack's declaration.
type Stack struct {
	// Name is its directory's name, which --clients gives.
	Name string `json:"-"`
	// Language names it for a reader ("Node.js").
	Language string `json:"language"`
	// Order places it among the stacks in help and reports.
	Order int `json:"order"`
	// Runtime are the programs that may run its agent, the first one
	// present taken (none: Command's first word is the agent itself).
	Runtime []string `json:"runtime,omitempty"`
	// Command is the agent's command line after the runtime: a word that
	// names one of its files is that file where it is installed. dbsock
	// adds the server's protocol family and the library.
	Command []string `json:"command"`
	// Build, when set, is run in the installed directory once its files
	// are copied (the C agent's make).
	Build []string `json:"build,omitempty"`
	// Packages are the Debian packages it needs installed (and its Build).
	Packages []string `json:"packages"`
	// Unpack are the Debian packages it reads without installing them.
	Unpack *Unpack `json:"unpack,omitempty"`
	// Libraries are its client libraries, each with the Debian packages
	// it needs beyond Packages.
	Libraries map[string][]string `json:"libraries"`
	// Families are the servers' protocol families it speaks, by the
	// names the agent protocol gives them (drivers.AgentLookup.Family,
	// as each target's driver names it): it measures every target of
	// each (a pooler is of its database's family).
	Families map[string]Family `json:"families"`
	// TimingGoalNs, when set, is the most its agent's own cost of timing
	// an op may be, in nanoseconds (beside the share of the case's p50
	// every agent is held to): C's clock is the cheapest to read.
	TimingGoalNs int64 `json:"timing_goal_ns,omitempty"`
	// FloorReference says that its agent's ping-pong with dbsock's floor
	// server is the kernel floor the decomposition subtracts (--explain).
	FloorReference bool `json:"floor_reference,omitempty"`
	// Workers, when set, is how its agent runs a load of many
	// connections (agent protocol 2): one of WorkerModels. A stack
	// without it (or Models) measures one connection at a time, closed
	// loop.
	Workers string `json:"workers,omitempty"`
	// Models, in place of Workers, are the worker models its agent can
	// run a load in, the first its default: --clients STACK:MODEL picks
	// another, which its agent is told by `--workers MODEL` before the
	// target (ModelArgs).
	Models []string `json:"models,omitempty"`
	// ModelLimits say, for a model of Models other than the first, what
	// it does not serve.
	ModelLimits map[string]ModelLimit `json:"model_limits,omitempty"`
	// Connect says that its agent times the connect scenario (each op a
	// connection of its own: agent protocol 2's capabilities.connect).
	Connect bool `json:"connect,omitempty"`
}

// WorkerModels are the concurrency models an agent may run a load in:
// a thread per connection, a process per connection (as gunicorn's sync
// workers and PHP-FPM run an application), or one event loop with N
// connections (as a pool gives Node.js).
var WorkerModels = []string{"threads", "processes", "event-loop"}

// ModelLimit is what one of a stack's worker models does not serve.
type ModelLimit struct {
	// Libraries, when set, are the only libraries the model runs, and
	// Missing says why it runs none of the others (a run skips such a
	// pair, saying it).
	Libraries []string `json:"libraries,omitempty"`
	Missing   string   `json:"missing,omitempty"`
	// NoConnect, when set, says why the model does not time the connect
	// scenario.
	NoConnect string `json:"no_connect,omitempty"`
}

// AllModels are the worker models s's agent can run a load in, its
// default first: Models, or Workers alone; none when it runs no load.
func (s Stack) AllModels() []string {
	if len(s.Models) > 0 {
		return s.Models
	}
	if s.Workers != "" {
		return []string{s.Workers}
	}
	return nil
}

// DefaultModel is the worker model s's agent runs a load in when
// --clients names none; "" when it runs no load.
func (s Stack) DefaultModel() string {
	if m := s.AllModels(); len(m) > 0 {
		return m[0]
	}
	return ""
}

// ModelMissing says why worker model m does not run library lib, or ""
// when it does.
func (s Stack) ModelMissing(m, lib string) string {
	l, ok := s.ModelLimits[m]
	if !ok || len(l.Libraries) == 0 || slices.Contains(l.Libraries, lib) {
		return ""
	}
	return l.Missing
}

// ModelArgs are the arguments that start s's agent in worker model m,
// before the target: none for its default, `--workers m` for another.
func (s Stack) ModelArgs(m string) []string {
	if m == "" || m == s.DefaultModel() {
		return nil
	}
	return []string{"--workers", m}
}

// Unpack are Debian packages a stack reads without installing them
// (Debian's node-* packages depend on its nodejs, which would replace a
// node installed otherwise): scripts/install-deps.sh downloads them and
// the node-* ones they depend on into DebsDir/NAME, dbsock unpacks them
// with dpkg-deb -x into the stack's installed directory.
type Unpack struct {
	Packages []string `json:"packages"`
	// Within are the names of packages of the closure that are unpacked
	// too: those that match this prefix ("node-").
	Within string `json:"within"`
	// Env are the agent's variables, each a list of directories of the
	// unpacked tree joined with ':' (NODE_PATH).
	Env map[string][]string `json:"env"`
}

// Family is what a stack has for one protocol family.
type Family struct {
	// Libraries are the libraries it measures the family's targets
	// with, the default first: the one place a stack's default is chosen.
	Libraries []string `json:"libraries"`
	// NoTLS, when set, says why its agent is not measured on the tls
	// path to the family's targets.
	NoTLS string `json:"no_tls,omitempty"`
	// NoConnect, when set, says why its agent does not time the connect
	// scenario on the family's targets (where Connect says it times it
	// elsewhere).
	NoConnect string `json:"no_connect,omitempty"`
	// Missing, in place of Libraries, says why the stack has no library
	// for the family (the one its ecosystem has cannot talk to dbsock's
	// server), which a run that skips the pair repeats.
	Missing string `json:"missing,omitempty"`
}

var (
	stackName   = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)
	familyName  = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	libraryName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	packageName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
)

// Reserved are names no stack directory may take: Go's stack in dbsock
// and a user's own agent (--clients go, cmd:COMMAND).
var Reserved = []string{"go", "cmd"}

// Load reads every stack of fsys: each directory at its top with a
// stack.json, in their Order (then by name).
func Load(fsys fs.FS) ([]Stack, error) {
	files, err := fs.Glob(fsys, "*/"+Name)
	if err != nil {
		return nil, err
	}
	var stacks []Stack
	for _, f := range files {
		s, err := parse(fsys, f)
		if err != nil {
			return nil, err
		}
		stacks = append(stacks, s)
	}
	slices.SortFunc(stacks, func(a, b Stack) int { return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name)) })
	return stacks, nil
}

func parse(fsys fs.FS, file string) (Stack, error) {
	var s Stack
	b, err := fs.ReadFile(fsys, file)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		err = d.Decode(&s)
		if err != nil && strings.Contains(err.Error(), `unknown field "targets"`) {
			err = fmt.Errorf(`%w: a stack names what it has by the servers' protocol families, "families" (the names an open's family gives them: docs/agents.md), not by targets`, err)
		}
	}
	if err == nil {
		s.Name = path.Dir(file)
		err = s.check()
	}
	if err != nil {
		return Stack{}, fmt.Errorf("read the client stack of %s: %w", file, err)
	}
	return s, nil
}

// check says what is wrong with s, or nil.
func (s Stack) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !stackName.MatchString(s.Name) || slices.Contains(Reserved, s.Name) {
		bad("its directory's name %q is not a stack's (lower-case letters and digits, at most 16, not %s)", s.Name, strings.Join(Reserved, " or "))
	}
	if strings.TrimSpace(s.Language) == "" {
		bad("no language")
	}
	if len(s.Command) == 0 {
		bad("no command")
	}
	pkgs := slices.Clone(s.Packages)
	for lib, p := range s.Libraries {
		if !libraryName.MatchString(lib) {
			bad("library %q is not a library's name (lower-case letters, digits, - and _)", lib)
		}
		pkgs = append(pkgs, p...)
	}
	if u := s.Unpack; u != nil {
		pkgs = append(pkgs, u.Packages...)
		if len(u.Packages) == 0 || !packageName.MatchString(u.Within) {
			bad("unpack names no packages, or no prefix (within) of the packages of their closure it takes")
		}
	}
	for _, p := range pkgs {
		if !packageName.MatchString(p) {
			bad("%q is not a Debian package's name", p)
		}
	}
	s.checkModels(bad)
	if len(s.Families) == 0 {
		bad("no families")
	}
	for t, tg := range s.Families {
		switch {
		case !familyName.MatchString(t):
			bad("family %q is not a protocol family's name (lower-case letters, digits, - and _), as an open's family names it", t)
		case len(tg.Libraries) == 0 && strings.TrimSpace(tg.Missing) == "":
			bad("family %s has no library, and says not why (missing)", t)
		case len(tg.Libraries) > 0 && tg.Missing != "":
			bad("family %s has libraries and says why it has none (missing): one or the other", t)
		}
		for _, l := range tg.Libraries {
			if _, ok := s.Libraries[l]; !ok {
				bad("family %s's library %q is not among its libraries", t, l)
			}
		}
	}
	return errors.Join(errs...)
}

// checkModels says through bad what is wrong with s's worker models.
func (s Stack) checkModels(bad func(format string, args ...any)) {
	if s.Workers != "" && len(s.Models) > 0 {
		bad("both workers and models: give models alone, its default first")
	}
	for i, m := range s.AllModels() {
		if !slices.Contains(WorkerModels, m) || slices.Index(s.AllModels(), m) != i {
			bad("workers %q is not a worker model (%s), or is given twice", m, strings.Join(WorkerModels, ", "))
		}
	}
	for m, l := range s.ModelLimits {
		if !slices.Contains(s.AllModels(), m) || m == s.DefaultModel() {
			bad("model_limits names %q, which is not one of its models after the first", m)
		}
		if len(l.Libraries) > 0 && strings.TrimSpace(l.Missing) == "" {
			bad("model_limits %s names its libraries, and says not why it runs no others (missing)", m)
		}
		for _, lib := range l.Libraries {
			if _, ok := s.Libraries[lib]; !ok {
				bad("model_limits %s's library %q is not among its libraries", m, lib)
			}
		}
	}
}

// Files are the names of the files of s's directory in fsys that are
// its own (Patterns), relative to it.
func Files(fsys fs.FS, s Stack) ([]string, error) {
	entries, err := fs.ReadDir(fsys, s.Name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && Own(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Own says whether a file's name is one of a stack's own (Patterns).
func Own(name string) bool {
	return slices.ContainsFunc(Patterns, func(p string) bool {
		ok, _ := path.Match(p, name)
		return ok
	})
}

// Debian are every Debian package s installs: its own and its libraries'.
func (s Stack) Debian() []string {
	out := slices.Clone(s.Packages)
	for _, lib := range slices.Sorted(maps.Keys(s.Libraries)) {
		for _, p := range s.Libraries[lib] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
