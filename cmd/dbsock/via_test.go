package main

import (
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
)

// TestPostgresViaPgBouncer: postgres --via pgbouncer measures PostgreSQL
// through the PgBouncer dbsock starts, over the four routes of two legs,
// each compared with both legs on TCP, each run's legs verified.
func TestPostgresViaPgBouncer(t *testing.T) {
	testutil.NeedAny(t, "pgbouncer")
	rep := runJSON(t, "run", "postgres", "--via", "pgbouncer", "--n", "200", "--warmup", "20", "--instances", "1", "--blocks", "4")
	if len(rep.Targets) != 1 || rep.Targets[0].Name != "pgbouncer" || rep.Config.Baseline != drivers.TCPHopTCP {
		t.Fatalf("targets %+v, baseline %q; want pgbouncer against tcp-tcp", rep.Targets, rep.Config.Baseline)
	}
	seen := map[drivers.Transport]bool{}
	for _, r := range rep.Runs {
		seen[r.Transport] = true
		if !r.TransportVerified || r.Endpoint.Hop == "" {
			t.Errorf("%s: verified %v, hop's leg %q (%s)", r.Transport, r.TransportVerified, r.Endpoint.Hop, r.Evidence)
		}
	}
	if len(seen) != 4 || len(rep.HopMoves(&rep.Summary[0])) != 3 {
		t.Errorf("paths %v and %d comparisons read as legs; want the four routes and 3", seen, len(rep.HopMoves(&rep.Summary[0])))
	}
}
