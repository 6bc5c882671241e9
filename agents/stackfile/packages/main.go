// Command packages lists the Debian packages of the client stacks under
// agents/ (run from the repository's root), for scripts/install-deps.sh
// --with-stacks: a line "install PACKAGE" for each package a stack needs
// installed, and a line "unpack STACK DIR PREFIX PACKAGE..." for the
// packages a stack unpacks without installing them, which go to DIR with
// those of their dependencies whose names begin with PREFIX.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/agents/stackfile"
)

func main() {
	stacks, err := stackfile.Load(os.DirFS("agents"))
	if err == nil && len(stacks) == 0 {
		err = fmt.Errorf("no %s under ./agents: run from dbsock's checkout", stackfile.Name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "packages:", err)
		os.Exit(1)
	}
	var seen []string
	for _, s := range stacks {
		for _, p := range s.Debian() {
			if !slices.Contains(seen, p) {
				seen = append(seen, p)
				fmt.Println("install", p)
			}
		}
		if u := s.Unpack; u != nil {
			fmt.Println("unpack", s.Name, filepath.Join(stackfile.DebsDir, s.Name), u.Within, strings.Join(u.Packages, " "))
		}
	}
}
