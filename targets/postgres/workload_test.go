package postgres_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
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
		rep := pipelinetest.Measure(t, "postgres", targettest.External("postgres", srv),
			pipelinetest.Loop{Settings: scenarios.Settings{N: 10000, Warmup: 100, Rounds: 1, Blocks: 10, Seed: 3, Keys: keys, Op: drivers.OpUpdate}, Rows: 1000})
		var writes int64
		for _, r := range rep.Runs {
			writes += r.Writes
			if r.Writes != r.N-r.Errors+100 {
				t.Errorf("%s %s: %d writes for %d ops, %d errors and 100 warm-up ops", dist, r.Transport, r.Writes, r.N, r.Errors)
			}
		}
		touched, sum, hottest := counters(t, srv.Unix())
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

// TestMixedCountedOnTheServer runs --op mixed:50/50 and reads the counters
// back: the writes the update runs counted are on the server, exactly, and
// the reads and the writes are two cases, each with its own speedup.
func TestMixedCountedOnTheServer(t *testing.T) {
	srv := targettest.Local(t, "postgres", "initdb")
	rep := pipelinetest.Measure(t, "postgres", targettest.External("postgres", srv),
		pipelinetest.Loop{Settings: scenarios.Settings{N: 2000, Warmup: 50, Rounds: 1, Blocks: 10, Seed: 5, Op: drivers.OpMixed, Mix: scenarios.Mix{Reads: 1, Writes: 1}}, Rows: 1000})
	var writes, reads int64
	for _, r := range rep.Runs {
		switch r.Op {
		case drivers.OpUpdate:
			writes += r.Writes
		case drivers.OpRead:
			reads += r.N
			if r.Writes != 0 {
				t.Errorf("%s reads counted %d writes", r.Transport, r.Writes)
			}
		default:
			t.Fatalf("run of op %q under --op mixed", r.Op)
		}
	}
	if _, sum, _ := counters(t, srv.Unix()); sum != writes || writes < 1500 || reads < 1500 {
		t.Errorf("the counters add up to %d, the update runs made %d writes (and the reads %d ops); want equal, each about 2000", sum, writes, reads)
	}
	if len(rep.Summary) != 2 || rep.Summary[0].Against(drivers.Unix).SpeedupP50CI == nil || rep.Summary[1].Against(drivers.Unix).SpeedupP50CI == nil {
		t.Fatalf("%d summaries, want reads and writes apart, each with its paired interval", len(rep.Summary))
	}
	for _, s := range rep.Summary {
		if !strings.Contains(s.Label(), "of a 1/1 mix") {
			t.Errorf("case %q does not say it is part of the mix", s.Label())
		}
	}
}

// TestYourQueryAndKeys: the user's own SELECT runs on the user's keys (from
// a query), no table is made for them, and a statement the server refuses
// stops the run before timing with the server's own words.
func TestYourQueryAndKeys(t *testing.T) {
	srv := targettest.Local(t, "postgres", "initdb")
	p := targettest.External("postgres", srv)
	opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 300, Warmup: 10, Rounds: 1, Blocks: 3, Seed: 1}, Rows: 200}
	pipelinetest.Measure(t, "postgres", p, opt) // dbsock's table, standing in for the user's
	rep, err := pipelinetest.MeasureOwn(t, "postgres", p, opt, pipelinetest.Own{
		Query:    `SELECT nickname, n FROM "user" WHERE id = $1`,
		KeysFrom: &pipeline.KeySource{Query: `SELECT id FROM "user" WHERE id % 10 = 0`},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Runs {
		if r.N != 300 || r.Errors != 0 || r.DistinctKeys > 20 || r.DistinctKeys < 15 {
			t.Errorf("%s: %d ops, %d errors, %d distinct keys; want 300 ops over the 20 keys the query gave", r.Transport, r.N, r.Errors, r.DistinctKeys)
		}
	}
	if op := rep.Targets[0].Operation; !strings.Contains(op, `SELECT nickname, n FROM "user" WHERE id = ID`) || !strings.Contains(op, "your own query") {
		t.Errorf("operation %q does not name the user's query", op)
	}
	_, err = pipelinetest.MeasureOwn(t, "postgres", p, opt, pipelinetest.Own{Query: `SELECT nope FROM "user" WHERE id = $1`})
	if !errors.Is(err, drivers.ErrStatement) {
		t.Fatalf("a bad query: %v; want a statement error", err)
	}
	targettest.Contains(t, err, `column "nope" does not exist`, "Plan.Workload.Queries")
	_, err = pipelinetest.MeasureOwn(t, "postgres", p, opt, pipelinetest.Own{Query: `SELECT nickname FROM "user" WHERE id = $1::int + 100000`})
	targettest.Contains(t, err, "returned nothing")
}
