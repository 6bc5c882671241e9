package agents

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Support is what a target tells every agent about itself, in its
// registration (targets.Target.Agents). What each stack has for it (its
// libraries, the default first, and why its agent is not measured on the
// tls path) is in the stack's own stack.json (docs/agents.md).
type Support struct {
	// NoTLS, when set, says why no agent is measured on the target's tls
	// path (the server shows dbsock no other session's TLS).
	NoTLS string
}

// ErrNoLibrary is wrapped when a stack's agent has no client library for
// a target.
var ErrNoLibrary = errors.New("no client library")

// Library is the library stack's agent uses for target, as the stacks of
// the agents directory dir ("" for Dir's) declare it: library when it is
// one of the stack's libraries for target, its default when library is
// "". The error wraps ErrNoLibrary, and names what the stack has.
func Library(dir, stack, target, library string) (string, error) {
	c, err := load(dir)
	if err != nil {
		return "", err
	}
	s, err := c.stack(stack)
	if err != nil {
		return "", err
	}
	have := s.Targets[target].Libraries
	switch {
	case len(have) == 0 && s.Targets[target].Missing != "":
		return "", fmt.Errorf("the %s agent has %w for %s: %s", stack, ErrNoLibrary, target, s.Targets[target].Missing)
	case len(have) == 0:
		return "", fmt.Errorf("the %s agent has %w for %s", stack, ErrNoLibrary, target)
	case library == "":
		return have[0], nil
	case !slices.Contains(have, library):
		return "", fmt.Errorf("the %s agent has %w %q for %s (it has %s)", stack, ErrNoLibrary, library, target, strings.Join(have, ", "))
	}
	return library, nil
}

// NoConnect is why stack's agent (of the agents directory dir, "" for
// Dir's) does not time the connect scenario on target, or "" when it does
// (or the stack says nothing of it).
func NoConnect(dir, stack, target string) string {
	if c, err := load(dir); err == nil {
		if s, err := c.stack(stack); err == nil {
			return s.Targets[target].NoConnect
		}
	}
	return ""
}

// NoTLS is why stack's agent (of the agents directory dir, "" for Dir's)
// is not measured on the tls path to target, whose Support is sup (nil
// when it registered none), or "" when it is.
func NoTLS(dir, stack, target string, sup *Support) string {
	why := ""
	if c, err := load(dir); err == nil {
		if s, err := c.stack(stack); err == nil {
			why = s.Targets[target].NoTLS
		}
	}
	if sup != nil {
		why = cmp.Or(sup.NoTLS, why)
	}
	return why
}
