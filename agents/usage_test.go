package agents_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
)

// TestBadCommandLines: every stack's agent, started with a family or a
// library it does not have, or a worker model no stack has, exits 2 with
// a line on stderr that names what it was given, and says no hello: the
// status dbsock's own command line gives a bad argument. (A stack of one
// worker model is never told one, and is not asked.)
func TestBadCommandLines(t *testing.T) {
	stacks, err := agents.Stacks("")
	if err != nil {
		t.Fatal(err)
	}
	for _, stack := range stacks {
		t.Run(stack, func(t *testing.T) {
			spec, err := specOfAnyFamily(stack)
			if err != nil {
				needStack(t, err)
			}
			base := spec.Argv[:len(spec.Argv)-2] // its runtime and agent, without family and library
			family := spec.Argv[len(spec.Argv)-2]
			cases := []badCase{
				{[]string{"no_such_family"}, "no_such_family"},
				{[]string{family, "no-such-library"}, "no-such-library"},
				{[]string{}, "usage"},
			}
			if len(agents.Declared("", stack).Models) > 1 { // a stack of one model is never told one
				cases = append(cases, badCase{[]string{"--workers", "no-such-model", family}, "no-such-model"})
			}
			for _, tc := range cases {
				argv := append(append([]string{}, base...), tc.args...)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = spec.Dir, append([]string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, spec.Env...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				cancel()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 2 {
					t.Errorf("%q: %v, want exit status 2; stderr: %s", tc.args, err, stderr.String())
				}
				if stdout.Len() != 0 {
					t.Errorf("%q: it said %q on stdout, want nothing (no hello)", tc.args, stdout.String())
				}
				if !strings.Contains(strings.ToLower(stderr.String()), tc.want) {
					t.Errorf("%q: stderr %q does not say %q", tc.args, stderr.String(), tc.want)
				}
			}
		})
	}
}

// badCase is a bad command line and what the agent's stderr must say.
type badCase struct {
	args []string
	want string
}

// specOfAnyFamily is stack's agent for the first family of pingpong,
// redis, postgres and mysql it runs.
func specOfAnyFamily(stack string) (agents.Spec, error) {
	var errs []error
	for _, family := range []string{"pingpong", "redis", "postgres", "mysql"} {
		spec, err := agents.For("", stack, family, family, "")
		if err == nil {
			return spec, nil
		}
		errs = append(errs, err)
	}
	return agents.Spec{}, errors.Join(errs...)
}
