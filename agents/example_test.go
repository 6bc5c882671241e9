package agents_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dbsock/dbsock/agents"
)

// An agent is any program that speaks the protocol on its stdin and
// stdout (docs/agents.md); this one, a shell script of the tests, answers
// an overhead request with one timed empty op. Start reads its hello;
// Close ends it and reaps it.
func ExampleStart() {
	ctx := context.Background()
	a, err := agents.Start(ctx, agents.Spec{Stack: "cmd", Argv: []string{"sh", "testdata/fake.sh", "well"}},
		agents.Limits{OpTimeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	h := a.Hello()
	ns, err := a.Overhead(ctx, 1)
	fmt.Println(h.Language, h.Library, len(ns), err)
	// Output: sh fake 1 <nil>
}
