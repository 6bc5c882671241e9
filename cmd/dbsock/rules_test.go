package main

import (
	"context"
	"strings"
	"testing"
	"time"

	lib "github.com/dbsock/dbsock"
)

// TestRunAndCompareRefuseTheSameRuns: every rule of a valid run that
// dbsock.Compare's options can break is refused by dbsock run (exit 2,
// naming its flag) and by Compare (naming its CompareOptions field), with
// the same words, before anything is started or dialed.
func TestRunAndCompareRefuseTheSameRuns(t *testing.T) {
	srv, err := lib.External("redis", lib.Endpoint{Address: "127.0.0.1:1"}, lib.Endpoint{Address: "/nonexistent/dbsock-rules.sock"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	open := func(context.Context, lib.Endpoint) (func(context.Context) error, func() error, error) {
		t.Error("Compare opened a connection for a comparison it should have refused")
		return nil, nil, nil
	}
	tests := []struct {
		name        string
		args        []string
		opt         lib.CompareOptions
		run, lib    string // the refusal's words, with the flag and the field
		sharedWords string // the rest, the same in both
	}{
		{"n negative", []string{"--n", "-5"}, lib.CompareOptions{N: -5}, "--n -5", "CompareOptions.N -5", "is out of range; accepted: 1 to 1000000000"},
		{"n absurd", []string{"--n", "2000000000"}, lib.CompareOptions{N: 2_000_000_000}, "--n 2000000000", "CompareOptions.N 2000000000", "is out of range"},
		{"warmup negative", []string{"--warmup", "-2"}, lib.CompareOptions{Warmup: -2}, "--warmup -2", "CompareOptions.Warmup -2", "is out of range; accepted: 0 to"},
		{"rounds too many", []string{"--rounds", "1001"}, lib.CompareOptions{Rounds: 1001}, "--rounds 1001", "CompareOptions.Rounds 1001", "is out of range; accepted: 1 to 1000"},
		{"blocks too many", []string{"--blocks", "10001", "--n", "20000"}, lib.CompareOptions{Blocks: 10001, N: 20000}, "--blocks 10001", "CompareOptions.Blocks 10001", "is out of range; accepted: 0 to 10000"},
		{"blocks above n", []string{"--blocks", "20", "--n", "10"}, lib.CompareOptions{Blocks: 20, N: 10}, "--blocks 20 is more than --n 10", "CompareOptions.Blocks 20 is more than CompareOptions.N 10", "a round's ops are split into blocks of at least one op"},
		{"concurrency too many", []string{"--concurrency", "5000"}, lib.CompareOptions{Concurrency: 5000}, "--concurrency 5000", "CompareOptions.Concurrency 5000", "is out of range; accepted: 1 to 4096"},
		{"concurrency beyond memory", []string{"--concurrency", "1000"}, lib.CompareOptions{Concurrency: 1000}, "lower --concurrency to at most 952", "lower CompareOptions.Concurrency to at most 952", "more than the 640 MiB it allows itself"},
		{"op timeout tiny", []string{"--op-timeout", "1ms"}, lib.CompareOptions{OpTimeout: time.Millisecond}, "--op-timeout 1ms", "CompareOptions.OpTimeout 1ms", "is out of range; accepted: 10ms to 1h"},
		{"op timeout huge", []string{"--op-timeout", "2h"}, lib.CompareOptions{OpTimeout: 2 * time.Hour}, "--op-timeout 2h0m0s", "CompareOptions.OpTimeout 2h0m0s", "is out of range"},
		{"placement unknown", []string{"--placement", "diagonal"}, lib.CompareOptions{Placement: "diagonal"}, `--placement "diagonal"`, `CompareOptions.Placement "diagonal"`, "is not accepted; use one of: auto, none, same, split"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := dbsock(t, append([]string{"run", "redis", "--provider", "local"}, tt.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tt.run) || !strings.Contains(stderr, tt.sharedWords) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("dbsock run: exit %d, stderr %q; want 2 and one line with %q and %q", code, stderr, tt.run, tt.sharedWords)
			}
			if strings.Contains(stderr, "Options.") || strings.Contains(stderr, "Plan.") {
				t.Errorf("dbsock run names a field, not a flag: %q", stderr)
			}
			_, err := lib.Compare(context.Background(), srv, "rules", open, tt.opt)
			if err == nil {
				t.Fatalf("Compare accepted %+v", tt.opt)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.lib) || !strings.Contains(msg, tt.sharedWords) || strings.Contains(msg, "--") {
				t.Errorf("Compare: %q; want %q and %q, and no flag", msg, tt.lib, tt.sharedWords)
			}
		})
	}
}
