// Command gen writes compose.yaml from the targets' descriptions of their
// servers (go generate ./compose runs it):
//
//	go run ./compose/gen compose/compose.yaml
package main

import (
	"fmt"
	"os"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all" // every target dbsock ships
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./compose/gen FILE (compose/compose.yaml; go generate ./compose runs it)")
		os.Exit(2)
	}
	b, err := compose.Render(targets.Containers())
	if err == nil {
		err = os.WriteFile(os.Args[1], b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: write %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
