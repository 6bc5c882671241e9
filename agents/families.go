package agents

import (
	"fmt"
	"slices"
	"sync"
)

// A stack's stack.json keys what it has by the server's protocol family
// (drivers.AgentLookup.Family, as each target's driver names it), not by
// dbsock's target names, and its agent is started with the family: a new
// target of a family a stack speaks (another server of the same protocol,
// a proxy in front of one) needs no change
// to any stack. The target registry (package targets) says which family
// each target is of (SetFamilies).

var (
	familiesMu sync.Mutex
	families   func() map[string]string
)

// SetFamilies makes f the source of every target's protocol family: a
// map of each target's name to its family, read afresh at each use, so
// that a target registered later is known. Package targets sets it.
func SetFamilies(f func() map[string]string) {
	familiesMu.Lock()
	defer familiesMu.Unlock()
	families = f
}

func targetFamilies() map[string]string {
	familiesMu.Lock()
	f := families
	familiesMu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// Family is target's protocol family, as the target registry says it;
// an error when it knows no such target, or none an agent measures.
func Family(target string) (string, error) {
	if f, ok := targetFamilies()[target]; ok && f != "" {
		return f, nil
	}
	return "", fmt.Errorf("%s is not a target an agent measures (one whose driver names its protocol family: import package targets/all, or the target's own package)", target)
}

// TargetsOf are the targets of protocol family, by name.
func TargetsOf(family string) []string {
	var out []string
	for t, f := range targetFamilies() {
		if f == family {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
