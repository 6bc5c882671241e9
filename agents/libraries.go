package agents

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Support is what a target tells the agents about itself, in its
// registration (targets.Target.Agents): each stack's client libraries for
// it, the default first (docs/agents.md), and why a stack's agent is not
// measured on its tls path (the key "" for every stack: the server shows
// dbsock no other session's TLS). A stack with no library for a target is
// not measured from it.
type Support struct {
	Libraries map[string][]string
	NoTLS     map[string]string
}

// ErrNoLibrary is wrapped when a stack's agent has no client library for
// a target.
var ErrNoLibrary = errors.New("no client library")

// Library is the library stack's agent uses for target (whose Support s
// is; nil when it registered none): library when it is one of the stack's
// libraries for target, its default when library is "". The error wraps
// ErrNoLibrary, and names what the stack has.
func (s *Support) Library(stack, target, library string) (string, error) {
	if !slices.Contains(Stacks, stack) {
		return "", fmt.Errorf("no client stack %q", stack)
	}
	var have []string
	if s != nil {
		have = s.Libraries[stack]
	}
	switch {
	case len(have) == 0:
		return "", fmt.Errorf("the %s agent has %w for %s", stack, ErrNoLibrary, target)
	case library == "":
		return have[0], nil
	case !slices.Contains(have, library):
		return "", fmt.Errorf("the %s agent has %w %q for %s (it has %s)", stack, ErrNoLibrary, library, target, strings.Join(have, ", "))
	}
	return library, nil
}

// NoTLSFor is why stack's agent is not measured on the tls path to the
// target whose Support s is, or "" when it is.
func (s *Support) NoTLSFor(stack string) string {
	if s == nil {
		return ""
	}
	return cmp.Or(s.NoTLS[""], s.NoTLS[stack])
}

// Dir is the agents directory dbsock runs its agents from: the one
// beside this package's source, when dbsock runs from its source tree,
// else ./agents. It says where it looked when neither is there.
func Dir() (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(file)
		if _, err := os.Stat(filepath.Join(dir, "c", "Makefile")); err == nil {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	if abs, err := filepath.Abs("agents"); err == nil {
		if _, err := os.Stat(filepath.Join(abs, "c", "Makefile")); err == nil {
			return abs, nil
		}
		tried = append(tried, abs)
	}
	return "", fmt.Errorf("the agents directory of dbsock's source is not at %v: run dbsock from its source tree, with scripts/install-deps.sh --with-stacks done", tried)
}
