package agents

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/agents/stackfile"
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

// Library is the library stack's agent uses for target, whose server
// speaks protocol family (its driver's drivers.AgentLookup.Family), as
// the stacks of the agents directory dir ("" for Dir's) declare it for
// the family: library when it is one of the stack's libraries for it, its
// default when library is "". The error wraps ErrNoLibrary, and names the
// target and what the stack has.
func Library(dir, stack, target, family, library string) (string, error) {
	s, fam, err := familyOf(dir, stack, family)
	if err != nil {
		return "", err
	}
	have := fam.Libraries
	switch {
	case family == "":
		return "", fmt.Errorf("the %s agent has %w for %s: its driver names no protocol family (drivers.AgentLookup.Family) for a stack to choose one by", stack, ErrNoLibrary, target)
	case len(have) == 0 && fam.Missing != "":
		return "", fmt.Errorf("the %s agent has %w for %s: %s", stack, ErrNoLibrary, target, fam.Missing)
	case len(have) == 0:
		return "", fmt.Errorf("the %s agent has %w for %s (its stack.json names none for its protocol family, %s)", s.Name, ErrNoLibrary, target, family)
	case library == "":
		return have[0], nil
	case !slices.Contains(have, library):
		return "", fmt.Errorf("the %s agent has %w %q for %s (it has %s)", stack, ErrNoLibrary, library, target, strings.Join(have, ", "))
	}
	return library, nil
}

// familyOf is stack's declaration (of the agents directory dir) and what
// it has for protocol family (the zero Family when nothing).
func familyOf(dir, stack, family string) (stackfile.Stack, stackfile.Family, error) {
	c, err := load(dir)
	if err != nil {
		return stackfile.Stack{}, stackfile.Family{}, err
	}
	s, err := c.stack(stack)
	if err != nil {
		return stackfile.Stack{}, stackfile.Family{}, err
	}
	return s, s.Families[family], nil
}

// NoConnect is why stack's agent (of the agents directory dir, "" for
// Dir's) does not time the connect scenario on a server of protocol
// family, or "" when it does (or the stack says nothing of it).
func NoConnect(dir, stack, family string) string {
	_, fam, _ := familyOf(dir, stack, family)
	return fam.NoConnect
}

// NoTLS is why stack's agent (of the agents directory dir, "" for Dir's)
// is not measured on the tls path to a target of protocol family, whose
// Support is sup (nil when it registered none), or "" when it is.
func NoTLS(dir, stack, family string, sup *Support) string {
	_, fam, _ := familyOf(dir, stack, family)
	why := fam.NoTLS
	if sup != nil {
		why = cmp.Or(sup.NoTLS, why)
	}
	return why
}
