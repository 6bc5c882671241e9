package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
)

// roundsDiffer is a report whose case's speedup moved between its two
// rounds (1.2x, then 2x), summarized: the engine warns of it, naming the
// rounds setting.
func roundsDiffer(t *testing.T) *results.Report {
	t.Helper()
	c := results.Case{Target: "redis", Scenario: "pk", Concurrency: 1}
	rep := &results.Report{Targets: []results.Target{{Name: "redis"}}}
	for round, tcp := range map[int]int64{1: 12000, 2: 20000} {
		for tr, p50 := range map[drivers.Transport]int64{drivers.TCP: tcp, drivers.Unix: 10000} {
			run := results.Run{Case: c, Transport: tr, Round: round, N: 300}
			for pair := range 3 {
				run.Blocks = append(run.Blocks, results.Block{Pair: pair, N: 100, P50: p50, Mean: float64(p50)})
			}
			rep.Runs = append(rep.Runs, run)
		}
	}
	if err := rep.Summarize(); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestWarningsNameTheFlags: dbsock run words a report's warnings and
// errors with its flags, where the engine names its own fields; a warning
// read from a file keeps its words.
func TestWarningsNameTheFlags(t *testing.T) {
	rep := roundsDiffer(t)
	rep.Summary[0].Warnings = append(rep.Summary[0].Warnings, results.Says("a file's words: run more --rounds"))
	rep.Targets[0].Fail(setting.Err("redis over TCP did not answer within 10s (%s)", setting.OpTimeout))
	if w := rep.Summary[0].Warnings[0]; w.Kind != results.RoundsDiffer || !strings.Contains(w.String(), "run more Plan.Loop.Rounds") {
		t.Fatalf("before it is worded, the warning names the engine's field: %s %q", w.Kind, w)
	}
	rep.Word(flagName)
	got := strings.Join(results.Texts(rep.Summary[0].Warnings), "\n") + "\n" + rep.Targets[0].Error
	for _, want := range []string{"1.20× in round 1, 2.00× in round 2", "run more --rounds to average", "a file's words: run more --rounds", "within 10s (--op-timeout)"} {
		if !strings.Contains(got, want) {
			t.Errorf("worded for the command line, %q does not say %q", got, want)
		}
	}
	if strings.Contains(got, "Options.") || strings.Contains(got, "Plan.") {
		t.Errorf("worded for the command line, %q names the engine's fields", got)
	}
}

// TestHolmWarningNamesTheFlag: a run whose comparisons outnumber what its
// server instances can carry through Holm's adjustment is told so on
// stderr before anything starts, naming the flag to raise (the engine
// names Plan.Instances). The run is interrupted before it starts, so that
// nothing is measured.
func TestHolmWarningNamesTheFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	Main(ctx, onePlacement([]string{"run", "echo", "--provider", "local", "--paths", "tcp,tcp2,unix", "--concurrency", "1,2", "--instances", "7", "--n", "20", "--warmup", "0"}), &stdout, &stderr)
	if got := stderr.String(); !strings.Contains(got, "4 comparisons (1 targets and client stacks measured × 2 cases × 2 paths against TCP) over 7 server instances") ||
		!strings.Contains(got, "set --instances to 8 or more for verdicts") || strings.Contains(got, "Plan.") {
		t.Errorf("stderr of a run of 4 comparisons over 7 instances, want the warning naming --instances:\n%s", got)
	}
}

// TestInstancesRaisedWhenNotGiven: without --instances, a run that makes
// more comparisons than 9 instances can carry through Holm's adjustment
// measures as many as they need and says so (13 comparisons: 10); given,
// --instances is kept (and warned of). Interrupted before anything starts.
func TestInstancesRaisedWhenNotGiven(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := onePlacement([]string{"run", "echo", "--provider", "local", "--paths", "tcp,tcp2,unix", "--concurrency", "1,2,3,4,5,6,7", "--n", "70", "--warmup", "0"})
	var stdout, stderr bytes.Buffer
	Main(ctx, args, &stdout, &stderr)
	if got := stderr.String(); !strings.Contains(got, "dbsock: 14 comparisons: 10 server instances per case rather than 9") || strings.Contains(got, "set --instances") {
		t.Errorf("stderr of a run of 14 comparisons without --instances:\n%s", got)
	}
	stderr.Reset()
	Main(ctx, append(args, "--instances", "9"), &stdout, &stderr)
	if got := stderr.String(); strings.Contains(got, "rather than") || !strings.Contains(got, "set --instances to 10 or more") {
		t.Errorf("stderr of a run of 14 comparisons with --instances 9:\n%s", got)
	}
}
