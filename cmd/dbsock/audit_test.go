package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
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
			said := slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(stderr, w) })
			if code != 1 || !said || !strings.Contains(stderr, "the server did not see what the agent reported") {
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

// TestAgentLiesBoundedFromBelow: an agent whose every op is real, on its
// verified connection or beside it, but which says less than it took, or
// took its ops another way, fails its case with what disagreed, and the
// case shows no figure: latencies divided by 5 leave most of its time on
// dbsock's clock uncovered; a TCP block whose ops but the last ran on
// connections of their own moves the server's count of connections; a
// TCP block answered with the last Unix block's latencies repeats them;
// the connect scenario's latencies divided by 5; PostgreSQL's connect
// scenario done on the kept connection leaves pg_stat_database's
// sessions where they were; at load, lags said to be 0 put the last op's
// end long before the answer; under --duration, ops dropped from the
// answer leave the server's count above it.
func TestAgentLiesBoundedFromBelow(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	script, err := filepath.Abs("../../agents/testdata/blocklie.py")
	if err != nil {
		t.Fatal(err)
	}
	rest := []string{"--n", "1000", "--blocks", "4"}
	for _, tc := range []struct {
		target, mode string
		args         []string
		want         string
	}{
		{"redis", "divide", rest, "cover at best 0."},
		{"redis", "fresh", rest, "INFO stats total_connections_received moved by"},
		// Replayed latencies are refused as repeated, or, where they are
		// longer than the TCP block's own request took, as too long.
		{"redis", "replay", rest, "are those it gave for unix-|add up to more than the whole request took on dbsock's clock"},
		{"redis", "connectdivide", []string{"--n", "400", "--blocks", "4", "--scenario", "connect"}, "on unix (connect) cover at best 0."},
		{"postgres", "connectliar", []string{"--n", "200", "--blocks", "4", "--scenario", "connect"}, "pg_stat_database sessions moved by 0"},
		{"redis", "lag0", []string{"--n", "20000", "--blocks", "4", "--concurrency", "4", "--rate", "200000"}, "before its answer reached dbsock"},
		{"redis", "drop", []string{"--blocks", "2", "--concurrency", "4", "--rate", "2000", "--duration", "2s"}, "it did more lookups than it reported"},
	} {
		t.Run(tc.target+"/"+tc.mode, func(t *testing.T) {
			if tc.target == "postgres" {
				testutil.NeedAny(t, "postgres", "/usr/lib/postgresql/15/bin/postgres")
			}
			args := append([]string{"run", tc.target, "--clients", "cmd:/usr/bin/python3 " + script + " " + tc.mode + " " + tc.target,
				"--provider", "local", "--instances", "1", "--format", "json"}, tc.args...)
			code, stdout, stderr := dbsock(t, args...)
			said := slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(stderr, w) })
			if code != 1 || !said || !strings.Contains(stderr, "the server did not see what the agent reported") {
				t.Fatalf("exit %d, stderr %q: want exit 1 and an error saying %q", code, stderr, tc.want)
			}
			var rep struct {
				Summary []struct {
					Comparisons []struct {
						SpeedupP50 float64 `json:"speedup_p50"`
					} `json:"comparisons"`
				} `json:"summary"`
				Runs []struct {
					Disbelieved bool `json:"disbelieved"`
				} `json:"runs"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Runs) == 0 {
				t.Fatalf("the report: %v (%d runs)", err, len(rep.Runs))
			}
			for _, s := range rep.Summary {
				for _, c := range s.Comparisons {
					if c.SpeedupP50 != 0 {
						t.Errorf("the refused case still gives a speedup: %v", c.SpeedupP50)
					}
				}
			}
			for i, r := range rep.Runs {
				if !r.Disbelieved {
					t.Errorf("run %d of the refused case is not marked disbelieved", i)
				}
			}
		})
	}
}
