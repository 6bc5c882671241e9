// Command dbsock measures how a database client performs over a Unix domain
// socket versus TCP on 127.0.0.1, against real servers, and writes a latency
// table as Markdown or JSON.
//
//	dbsock run mysql --n 10000
//	dbsock run all --format json --out results.json
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/supply/containers" // the container runtime (testcontainers-go)
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all" // every target registers itself
)

func main() {
	child.MaybeRun()
	targets.Quiet()
	// dbsock's own process: testcontainers' reaper and logger off (a
	// library leaves them to the program that imports it).
	containers.Quiet()
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit: the runtime collects sooner as the heap nears it,
		// so that garbage does not double what a run holds (its cases
		// hold at most scenarios.ClientBudget).
		debug.SetMemoryLimit(softMemoryLimit)
	}
	// SIGPIPE: the reader of its output went away (dbsock run ... | head):
	// stop as on Ctrl-C, removing what it started, rather than die at the
	// next write and leave its temp dir behind. A SIGPIPE from a socket (a
	// server that died mid-write) is not that: it fails its own op.
	ctx, stop := stopContext(os.Stdout, os.Stderr)
	if !ownsSecondSignal(os.Args[1:]) {
		second := make(chan os.Signal, 2)
		signal.Notify(second, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		go exitOnSecondSignal(second, os.Stderr, os.Exit)
	}
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// ownsSecondSignal says whether the command args run waits for a second
// Ctrl-C itself: dbsock run removes what it started before it exits.
func ownsSecondSignal(args []string) bool {
	c, _, err := newRootCmd(io.Discard, io.Discard).Find(args)
	return err == nil && c.Name() == "run"
}

// exitOnSecondSignal exits dbsock at the second Ctrl-C, SIGTERM or SIGHUP
// it reads from sig: the first ends the command's context, and whatever
// does not stop for it (a write the kernel holds, a drawing library's
// loop) must not keep dbsock from stopping when asked again.
func exitOnSecondSignal(sig <-chan os.Signal, stderr io.Writer, exit func(int)) {
	<-sig
	<-sig
	fmt.Fprintln(stderr, "dbsock: interrupted again: stopping now")
	exit(ExitFailed)
}

// softMemoryLimit is the Go runtime's soft memory limit for dbsock, unless
// GOMEMLIMIT sets another.
const softMemoryLimit = 900 << 20

// Exit statuses.
const (
	ExitOK     = 0
	ExitFailed = 1 // a run failed or was interrupted; a comparison could not be made
	ExitUsage  = 2 // bad command line
	// ExitThreshold: the run finished and wrote its report, but a
	// --threshold does not hold.
	ExitThreshold = 3
	// ExitRegression: compare --fail-on-regression found a significant
	// slowdown beyond its bound.
	ExitRegression = 4
)

// exitError is an error that ends dbsock with its own exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs dbsock with args and returns its exit status. Errors are printed
// to stderr as one line prefixed "dbsock: ".
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := newRootCmd(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	for _, line := range errorLines(err) {
		fmt.Fprintf(stderr, "dbsock: %s\n", line)
	}
	var xe *exitError
	if errors.As(err, &xe) {
		return xe.code
	}
	var ue *usageError
	if errors.As(err, &ue) || errors.Is(err, drivers.ErrStatement) {
		return ExitUsage // a bad --query or --keys-from, as the server said
	}
	return ExitFailed
}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// stopContext is the context that Ctrl-C, SIGTERM and SIGHUP end, and
// SIGPIPE when out or errOut is a pipe whose reader went away; stop
// releases the signals.
func stopContext(out, errOut *os.File) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	go func() {
		for s := range sig {
			if s == syscall.SIGPIPE && !outputGone(out, errOut) {
				continue // a socket's: the write that raised it fails on its own
			}
			cancel()
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}
