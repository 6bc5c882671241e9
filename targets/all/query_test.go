package all_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets/mysql"
	"github.com/dbsock/dbsock/targets/targettest"
)

// TestYourQuery runs each target's own op form (--query) against its real
// server: one that reads dbsock's seeded rows measures cleanly; one whose
// key names nothing, or that the server refuses, stops the run before
// timing (a statement error: exit 2) with the server's own words.
func TestYourQuery(t *testing.T) {
	for _, tt := range []struct {
		target, good, nothing, refused, says string
	}{
		{"mysql", "SELECT nickname, n FROM user WHERE id = ?", "SELECT nickname FROM user WHERE id = ? + 1000000",
			"SELECT nope FROM user WHERE id = ?", "Unknown column 'nope'"},
		{"redis", "STRLEN dbsock:user:{key}", "GET nokey:{key}", "INCR dbsock:user:{key}:n", "does not flag INCR read-only"},
		{"memcached", "get dbsock:user:{key}", "get nokey:{key}", "", ""},
		{"mongo", `{"_id": "{key}"}`, `{"_id": "x{key}"}`, `{"_id": {"$bogus": "{key}"}}`, "$bogus"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			srv := sharedLocal(t, tt.target)
			p := targettest.External(tt.target, srv)
			opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 200, Warmup: 10, Rounds: 1, Blocks: 2, Seed: 1}, Rows: 50}
			rep, err := pipelinetest.MeasureOwn(t, tt.target, p, opt, pipelinetest.Own{Query: tt.good})
			if err != nil {
				t.Fatalf("--query %q: %v", tt.good, err)
			}
			for _, r := range rep.Runs {
				if r.N != 200 || r.Errors != 0 || !r.TransportVerified {
					t.Errorf("--query %q over %s: %d ops, %d errors, verified %v", tt.good, r.Transport, r.N, r.Errors, r.TransportVerified)
				}
			}
			if op := rep.Targets[0].Operation; !strings.Contains(op, "your own query") {
				t.Errorf("operation %q does not say it is the user's query", op)
			}
			_, err = pipelinetest.MeasureOwn(t, tt.target, p, opt, pipelinetest.Own{Query: tt.nothing})
			if !errors.Is(err, drivers.ErrStatement) {
				t.Fatalf("--query %q: %v; want a statement error", tt.nothing, err)
			}
			targettest.Contains(t, err, "returned nothing")
			if tt.refused == "" {
				return
			}
			_, err = pipelinetest.MeasureOwn(t, tt.target, p, opt, pipelinetest.Own{Query: tt.refused})
			if !errors.Is(err, drivers.ErrStatement) {
				t.Fatalf("--query %q: %v; want a statement error", tt.refused, err)
			}
			targettest.Contains(t, err, tt.says)
		})
	}
}

// TestRedisCommandsByTheirFlags: under --op read a Redis command is judged
// by the server's COMMAND INFO, a container command (OBJECT, CONFIG) by its
// subcommand's: OBJECT ENCODING reads and is measured; CONFIG GET is not
// flagged read-only and is refused with its flags; an unknown command is
// named as such (not go-redis's "redis: nil").
func TestRedisCommandsByTheirFlags(t *testing.T) {
	srv := targettest.Local(t, "redis", targettest.Binaries["redis"]...)
	p := targettest.External("redis", srv)
	opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 50, Warmup: 5, Rounds: 1, Blocks: 1, Seed: 1}, Rows: 20}
	if _, err := pipelinetest.MeasureOwn(t, "redis", p, opt, pipelinetest.Own{Query: "OBJECT ENCODING dbsock:user:{key}"}); err != nil {
		t.Errorf("OBJECT ENCODING: %v", err)
	}
	for q, says := range map[string]string{
		"CONFIG GET maxmemory{key}": "does not flag CONFIG|GET read-only (its flags: admin",
		"NOSUCHCMD {key}":           "the server has no command NOSUCHCMD",
		"HGET dbsock:user:{key} f":  "WRONGTYPE", // the server's error, not "returned nothing"
	} {
		_, err := pipelinetest.MeasureOwn(t, "redis", p, opt, pipelinetest.Own{Query: q})
		if !errors.Is(err, drivers.ErrStatement) {
			t.Errorf("%s: %v; want a statement error", q, err)
			continue
		}
		targettest.Contains(t, err, says)
	}
}

// TestYourKeysAndWrite: keys from a file choose the rows (and no table is
// made for them), and the user's own UPDATE (--op update --query) writes
// exactly once per successful op, as the counters on the server say.
func TestYourKeysAndWrite(t *testing.T) {
	srv := sharedLocal(t, "mysql") // the user table's counters are this test's alone: it seeds them back to 0
	p := targettest.External("mysql", srv)
	opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 300, Warmup: 10, Rounds: 1, Blocks: 3, Seed: 1}, Rows: 100}
	pipelinetest.Measure(t, "mysql", p, opt) // dbsock's table, standing in for the user's
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("5\n7\n9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := &pipeline.KeySource{File: file, Keys: []string{"5", "7", "9"}}
	opt.Op = drivers.OpUpdate
	rep, err := pipelinetest.MeasureOwn(t, "mysql", p, opt, pipelinetest.Own{Query: "UPDATE user SET n = n + 2 WHERE id = ?", KeysFrom: keys})
	if err != nil {
		t.Fatal(err)
	}
	var writes int64
	for _, r := range rep.Runs {
		writes += r.Writes
		if r.DistinctKeys != 3 || r.Errors != 0 {
			t.Errorf("%s: %d distinct keys, %d errors; want the file's 3 keys, no errors", r.Transport, r.DistinctKeys, r.Errors)
		}
	}
	db, err := sqlOpen(srv.Unix())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sum, others int64
	if err := db.QueryRow("SELECT COALESCE(SUM(IF(id IN (5, 7, 9), n, 0)), 0), COALESCE(SUM(IF(id IN (5, 7, 9), 0, n)), 0) FROM user").Scan(&sum, &others); err != nil {
		t.Fatal(err)
	}
	// The statement is checked once per transport before timing: two more.
	if sum != 2*(writes+2) || others != 0 {
		t.Errorf("the keys' counters add up to %d and the others' to %d; the runs made %d writes (+2 checks) of 2 each", sum, others, writes)
	}
}

// sqlOpen opens a database/sql handle on a MySQL endpoint.
func sqlOpen(ep drivers.Endpoint) (*sql.DB, error) {
	c, err := gomysql.NewConnector(mysql.Config(ep))
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// TestRedisKeysFromScan: --keys-from query: on Redis is a SCAN MATCH
// pattern; its keys are what the ops read.
func TestRedisKeysFromScan(t *testing.T) {
	srv := targettest.Local(t, "redis", targettest.Binaries["redis"]...)
	p := targettest.External("redis", srv)
	opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 400, Warmup: 10, Rounds: 1, Blocks: 2, Seed: 1}, Rows: 40}
	pipelinetest.Measure(t, "redis", p, opt) // dbsock's keys, standing in for the user's
	rep, err := pipelinetest.MeasureOwn(t, "redis", p, opt, pipelinetest.Own{Query: "STRLEN {key}", KeysFrom: &pipeline.KeySource{Query: "dbsock:user:1*"}})
	if err != nil {
		t.Fatal(err)
	}
	// dbsock:user:1 and 10 to 19: 11 keys.
	if rep.Targets[0].Rows != 11 {
		t.Errorf("the SCAN gave %d keys, want 11", rep.Targets[0].Rows)
	}
	for _, r := range rep.Runs {
		if r.DistinctKeys != 11 || r.Errors != 0 {
			t.Errorf("%s: %d distinct keys, %d errors; want 11, none", r.Transport, r.DistinctKeys, r.Errors)
		}
	}
}

// TestMongoCollection: a filter on a collection of the user's own
// (--mongo-collection DB.COLL) reads that collection, and dbsock seeds
// nothing there; a key it does not hold is a statement error.
func TestMongoCollection(t *testing.T) {
	srv := sharedLocal(t, "mongo") // no test makes the collection dbsock.nothing
	p := targettest.External("mongo", srv)
	opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 200, Warmup: 10, Rounds: 1, Blocks: 2, Seed: 1}, Rows: 1}
	pipelinetest.Measure(t, "mongo", p, opt) // dbsock.user, standing in for the user's collection
	own := pipelinetest.Own{Query: `{"_id": "{key}"}`, Settings: `{"collection": "dbsock.user"}`}
	rep, err := pipelinetest.MeasureOwn(t, "mongo", p, opt, own)
	if err != nil {
		t.Fatal(err)
	}
	if op := rep.Targets[0].Operation; !strings.Contains(op, "db.user.findOne") || rep.Runs[0].Errors != 0 {
		t.Errorf("operation %q, %d errors", op, rep.Runs[0].Errors)
	}
	own.Settings = `{"collection": "dbsock.nothing"}`
	_, err = pipelinetest.MeasureOwn(t, "mongo", p, opt, own)
	if !errors.Is(err, drivers.ErrStatement) {
		t.Fatalf("an empty collection: %v; want a statement error (dbsock must not have seeded it)", err)
	}
	targettest.Contains(t, err, "returned nothing")
}
