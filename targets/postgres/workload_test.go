package postgres_test

import (
	"context"
	"math"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets/postgres"
	"github.com/dbsock/dbsock/targets/targettest"
)

// counters reads the server's own account of --op update: how many rows
// were written, the sum of all counters, and the largest.
func counters(t *testing.T, ep drivers.Endpoint) (touched, sum, hottest int64) {
	t.Helper()
	cfg, err := postgres.Config(ep)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgxConnect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	err = c.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE n > 0), coalesce(sum(n), 0), coalesce(max(n), 0) FROM "user"`).Scan(&touched, &sum, &hottest)
	if err != nil {
		t.Fatal(err)
	}
	return touched, sum, hottest
}

// TestUpdatesCountedOnTheServer runs --op update over 1,000 rows with
// 10,000 ops per transport and reads the counters back from the server:
// every successful write is there once (nothing lost, nothing counted
// twice), uniform keys touch at least 990 rows (a row is missed with
// probability (999/1000)^20000), and under zipf the hottest row takes its
// theoretical share 1/zeta(1000, 0.99) = 0.129384 (computed independently)
// within 20%.
func TestUpdatesCountedOnTheServer(t *testing.T) {
	srv := targettest.Local(t, "postgres", "initdb")
	for _, dist := range []string{"uniform", "zipf"} {
		keys, _ := scenarios.ParseKeys(dist)
		rep := targettest.Measure(t, "postgres", targettest.External("postgres", srv),
			scenarios.Options{N: 10000, Warmup: 100, Rounds: 1, Blocks: 10, Seed: 3, Rows: 1000, Keys: keys, Op: drivers.OpUpdate})
		var writes int64
		for _, r := range rep.Runs {
			writes += r.Writes
			if r.Writes != r.N-r.Errors+100 {
				t.Errorf("%s %s: %d writes for %d ops, %d errors and 100 warm-up ops", dist, r.Transport, r.Writes, r.N, r.Errors)
			}
		}
		touched, sum, hottest := counters(t, srv.Unix)
		if sum != writes {
			t.Errorf("%s: the counters add up to %d, the runs made %d writes", dist, sum, writes)
		}
		switch dist {
		case "uniform":
			if touched < 990 {
				t.Errorf("uniform: %d of 1000 rows written", touched)
			}
		case "zipf":
			share := float64(hottest) / float64(sum)
			if want := 0.12938362697857184; math.Abs(share-want)/want > 0.2 {
				t.Errorf("zipf: the hottest row has %.4f of the writes, theory %.4f", share, want)
			}
		}
		t.Logf("%s: %d writes, %d rows touched, hottest row %d", dist, writes, touched, hottest)
	}
}
