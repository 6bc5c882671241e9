package main

import (
	"strings"
	"testing"
)

// TestPacedRunSlowerThanTheOpTimeout: a paced run whose ops are further
// apart than --op-timeout (here 200 ms apart, 100 of them in one block,
// the fewest a block at a rate holds, with a 150 ms timeout, as --rate 1
// is with the default 10 s) is measured: the wait for an op's time is not
// a server that stopped answering.
func TestPacedRunSlowerThanTheOpTimeout(t *testing.T) {
	code, stdout, stderr := dbsock(t, "run", "redis", "--provider", "local", "--rate", "5", "--n", "100", "--rounds", "1", "--blocks", "1",
		"--warmup", "10", "--instances", "1", "--op-timeout", "150ms", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "did not answer") || !strings.Contains(stdout, `"transport_verified": true`) {
		t.Fatalf("stderr:\n%s\nstdout:\n%.2000s", stderr, stdout)
	}
}
