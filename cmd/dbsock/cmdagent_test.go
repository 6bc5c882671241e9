package main

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestThresholdOnCmdAgent: a threshold names a cmd: agent's case as
// TARGET@cmd, and holds or not on that case's numbers after a real run
// (the docs' agent, against a real Redis).
func TestThresholdOnCmdAgent(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	code, _, stderr := dbsock(t, "run", "redis", "--clients", "go,cmd:/usr/bin/python3 "+docAgent(t), "--provider", "local",
		"--format", "json", "--n", "300", "--instances", "1", "--warmup", "50", "-q",
		"--threshold", "redis@cmd.unix_speedup_p50>=0.01", "--threshold", "redis@cmd.unix.p50<10s")
	if code != ExitOK {
		t.Fatalf("thresholds on redis@cmd: exit %d, %s", code, stderr)
	}
	code, _, stderr = dbsock(t, "run", "redis", "--clients", "cmd:/usr/bin/python3 "+docAgent(t), "--provider", "local",
		"--format", "json", "--n", "300", "--instances", "1", "--warmup", "50", "-q", "--threshold", "redis@cmd.unix.p50<1ns")
	if code != ExitThreshold || !strings.Contains(stderr, "threshold redis@cmd.unix.p50<1ns violated") {
		t.Errorf("an impossible threshold on redis@cmd: exit %d, %q; want exit 3 naming it", code, stderr)
	}
}
