package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestAgentBlocksAudited: an agent whose connections are real and
// verified but whose blocks lie fails its case with a line that names
// what disagreed: latencies for ops it never did (the server's count, or
// its record of the connection's last query), latencies that add up to
// more than the block took on dbsock's clock, latencies under a round
// trip, and a TCP connection's ops sent over another connection on the
// socket.
func TestAgentBlocksAudited(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/blocklie.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, mode, want string }{
		{"redis", "liar", "the server's INFO commandstats cmdstat_get calls moved by"},
		{"postgres", "liar", "pg_stat_activity shows the last query of the session"},
		{"redis", "overlong", "its latencies add up to more than the whole request took on dbsock's clock"},
		{"redis", "floor", "less than a round trip to a server can (2µs)"},
		{"redis", "swap", "not get: it did not serve the block's lookups"},
	} {
		t.Run(tc.target+"/"+tc.mode, func(t *testing.T) {
			if tc.target == "postgres" {
				testutil.NeedAny(t, "postgres", "/usr/lib/postgresql/15/bin/postgres")
			}
			code, _, stderr := dbsock(t, "run", tc.target, "--clients", "cmd:/usr/bin/python3 "+script+" "+tc.mode, "--provider", "local",
				"--paths", "tcp,unix", "--n", "100", "--instances", "1", "--warmup", "10", "--format", "json")
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "the server did not see what the agent reported") {
				t.Errorf("exit %d, stderr %q: want exit 1 and an error saying %q", code, stderr, tc.want)
			}
		})
	}
}

// TestAgentBlocksAuditedOnEveryPath: an honest agent's blocks pass their
// audit on every path it measures, TLS among them (which the server's
// connection list shows as TCP).
func TestAgentBlocksAuditedOnEveryPath(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	code, _, stderr := dbsock(t, "run", "redis", "--clients", "python", "--provider", "local",
		"--paths", "tcp,tls,unix", "--n", "100", "--instances", "1", "--warmup", "10", "--format", "json")
	if code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
