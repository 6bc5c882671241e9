package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Stacks are the client stacks whose agents dbsock carries under agents/,
// in the order a report lists them.
var Stacks = []string{"c", "python", "node", "php"}

// For is the Spec of stack's agent for target, from the agents
// directory dir (the repository's agents/); library chooses one of the
// stack's libraries ("" for its default). It says what to install when
// the agent or its runtime is missing.
func For(dir, stack, target, library string) (Spec, error) {
	if !slices.Contains(Stacks, stack) {
		return Spec{}, fmt.Errorf("no client stack %q (want one of %s)", stack, strings.Join(Stacks, ", "))
	}
	if err := Installed(dir); err != nil {
		return Spec{}, err
	}
	args := []string{target}
	if library != "" {
		args = append(args, library)
	}
	var s Spec
	switch stack {
	case "c":
		s = Spec{Argv: append([]string{filepath.Join(dir, "c", "dbsock-agent")}, args...)}
	case "python":
		s = Spec{Argv: append([]string{"/usr/bin/python3", filepath.Join(dir, "python", "agent.py")}, args...)}
	case "php":
		s = Spec{Argv: append([]string{"/usr/bin/php", filepath.Join(dir, "php", "agent.php")}, args...)}
	case "node":
		mods := filepath.Join(dir, ".stacks", "node", "usr", "share", "nodejs")
		if _, err := os.Stat(mods); err != nil {
			return Spec{}, fmt.Errorf("the node stack's packages are not in %s: run scripts/install-deps.sh --with-stacks", mods)
		}
		node, err := findNode()
		if err != nil {
			return Spec{}, err
		}
		s = Spec{Argv: append([]string{node, filepath.Join(dir, "node", "agent.js")}, args...),
			Env: []string{"NODE_PATH=" + mods + ":" + filepath.Join(dir, ".stacks", "node", "usr", "lib", "nodejs")}}
	default:
		return Spec{}, fmt.Errorf("no client stack %q (want one of %s)", stack, strings.Join(Stacks, ", "))
	}
	s.Stack = stack
	for _, f := range s.Argv[:len(s.Argv)-len(args)] {
		if _, err := os.Stat(f); err != nil {
			return Spec{}, fmt.Errorf("the %s stack needs %s: run scripts/install-deps.sh --with-stacks (%w)", stack, f, err)
		}
	}
	return s, nil
}

// findNode is the machine's node (whichever is installed: dbsock never
// replaces it).
func findNode() (string, error) {
	for _, p := range []string{"/usr/local/bin/node", "/usr/bin/node"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the node stack needs node (20 or 18) in /usr/local/bin or /usr/bin")
}

// Installed says whether scripts/install-deps.sh --with-stacks has
// installed every stack and built the C agent for the agents directory
// dir (it leaves a marker, .stacks/complete, when it is done).
func Installed(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, ".stacks", "complete")); err != nil {
		return fmt.Errorf("the client stacks are not installed for %s: run scripts/install-deps.sh --with-stacks", dir)
	}
	return nil
}
