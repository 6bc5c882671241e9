package all_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/postgres"
	"github.com/dbsock/dbsock/targets/targettest"
)

// writeThroughARead is one of the statements and keys queries that look like reads
// (or are plain writes) and write: under --op read each must be refused
// before timing, with the server's words, and leave the data as it was.
type writeThroughARead struct {
	query, keys string // one of the two
	says        string // in the error
}

// TestReadsCannotWritePostgres: your statement and your keys query run in
// read-only transactions: a data-modifying WITH, a function that inserts,
// nextval, SELECT INTO, and keys queries that delete or drop are refused,
// and the table, the log, the sequence and the schema are untouched;
// directly and through PgBouncer (where the statement is run once in a
// read-only transaction before timing).
func TestReadsCannotWritePostgres(t *testing.T) {
	for _, target := range []string{"postgres", "pgbouncer"} {
		t.Run(target, func(t *testing.T) { readsCannotWritePostgres(t, target) })
	}
}

func readsCannotWritePostgres(t *testing.T, target string) {
	srv := sharedLocal(t, target)
	ctx := context.Background()
	cfg, err := postgres.Config(srv.Unix())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec // PgBouncer's transaction pooling
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{
		"DROP TABLE IF EXISTS items, log, stolen", // the shared server's, from a run before (-count)
		"DROP SEQUENCE IF EXISTS seq",
		"DROP FUNCTION IF EXISTS sidefx(int)",
		"CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)",
		"INSERT INTO items (id) SELECT generate_series(1, 50)",
		"CREATE TABLE log (i int)",
		"CREATE SEQUENCE seq",
		"CREATE FUNCTION sidefx(i int) RETURNS int AS 'INSERT INTO log VALUES (i); SELECT i' LANGUAGE sql",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	checkRefused(t, target, srv, []writeThroughARead{
		{query: "WITH u AS (UPDATE items SET n = n + 1 WHERE id = $1 RETURNING id) SELECT id FROM u", says: "read-only transaction"},
		{query: "SELECT sidefx($1)", says: "read-only transaction"},
		{query: "SELECT nextval('seq') + $1", says: "read-only transaction"},
		{query: "SELECT id INTO stolen FROM items WHERE id = $1", says: "read-only transaction"},
		{keys: "DELETE FROM items WHERE id > 40 RETURNING id", says: "does not read"},
		{keys: "DROP TABLE items", says: "does not read"},
		{keys: "WITH d AS (DELETE FROM items WHERE id > 40 RETURNING id) SELECT id FROM d", says: "data-modifying"},
		{keys: "SELECT sidefx(id) FROM items", says: "read-only transaction"},
	})
	var items, sum, logged int
	var called, stolen bool
	if err := c.QueryRow(ctx, "SELECT count(*), sum(n), (SELECT count(*) FROM log), (SELECT is_called FROM seq), to_regclass('stolen') IS NOT NULL FROM items").
		Scan(&items, &sum, &logged, &called, &stolen); err != nil {
		t.Fatal(err)
	}
	if items != 50 || sum != 0 || logged != 0 || called || stolen {
		t.Errorf("after the refused runs: %d items (want 50), sum of n %d (want 0), %d logged (want 0), nextval called %v, table stolen made %v", items, sum, logged, called, stolen)
	}
}

// TestReadsCannotWriteMySQL: the same for MariaDB (or MySQL): a function
// that inserts is refused in the read-only session, keys queries that
// write are refused, and the data is as it was.
func TestReadsCannotWriteMySQL(t *testing.T) {
	srv := sharedLocal(t, "mysql")
	db, err := sqlOpen(srv.Unix())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"DROP TABLE IF EXISTS items, log", // the shared server's, from a run before (-count)
		"DROP FUNCTION IF EXISTS sidefx",
		"CREATE TABLE items (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0)",
		"INSERT INTO items (id) VALUES " + values(50),
		"CREATE TABLE log (i INT)",
		"CREATE FUNCTION sidefx(i INT) RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO log VALUES (i); RETURN i; END",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	checkRefused(t, "mysql", srv, []writeThroughARead{
		{query: "SELECT sidefx(?)", says: "READ ONLY"},
		{keys: "DELETE FROM items WHERE id > 40", says: "does not read"},
		{keys: "DROP TABLE items", says: "does not read"},
		{keys: "SELECT sidefx(id) FROM items", says: "READ ONLY"},
	})
	var items, sum, logged int
	if err := db.QueryRow("SELECT count(*), sum(n), (SELECT count(*) FROM log) FROM items").Scan(&items, &sum, &logged); err != nil {
		t.Fatal(err)
	}
	if items != 50 || sum != 0 || logged != 0 {
		t.Errorf("after the refused runs: %d items (want 50), sum of n %d (want 0), %d logged (want 0)", items, sum, logged)
	}
}

// checkRefused runs each case against srv under --op read and wants a
// statement error (exit 2) that says what the case says.
func checkRefused(t *testing.T, target string, srv *supply.Server, cases []writeThroughARead) {
	t.Helper()
	p := targettest.External(target, srv)
	opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 50, Warmup: 5, Rounds: 1, Blocks: 1, Seed: 1}, Rows: 50}
	for _, tc := range cases {
		own := pipelinetest.Own{Query: tc.query}
		if tc.keys != "" {
			own = pipelinetest.Own{KeysFrom: &pipeline.KeySource{Query: tc.keys}, Query: map[string]string{"postgres": "SELECT id FROM items WHERE id = $1", "pgbouncer": "SELECT id FROM items WHERE id = $1", "mysql": "SELECT id FROM items WHERE id = ?"}[target]}
		}
		_, err := pipelinetest.MeasureOwn(t, target, p, opt, own)
		if !errors.Is(err, drivers.ErrStatement) {
			t.Errorf("%+v: %v; want a statement error", tc, err)
			continue
		}
		targettest.Contains(t, err, tc.says)
	}
}

// values is "(1),(2),...,(n)".
func values(n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = "(" + strconv.Itoa(i+1) + ")"
	}
	return strings.Join(v, ",")
}

// TestKeysQueryStopsAtRows: a keys query of a billion rows gives its first
// Rows keys, says in the report how many it had (at least 100 times Rows),
// without the rest being sent: through a cursor (PostgreSQL)
// or a derived table's LIMIT (MariaDB). Read whole, the rest would take
// minutes, past the 30 s op timeout given here.
func TestKeysQueryStopsAtRows(t *testing.T) {
	for name, tc := range map[string][3]string{
		// A billion: dbsock reads 100 times --rows to count them, no more.
		"postgres": {"SELECT generate_series(1, 1000000000)", "SELECT $1::int", "returned at least 1,000 keys; dbsock kept the first 10 of them"},
		"mysql":    {"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000000000) SELECT i FROM s", "SELECT ? + 0", "returned at least 1,000 keys; dbsock kept the first 10 of them"},
		// Fewer than that: said exactly.
		"postgres/50": {"SELECT generate_series(1, 50)", "SELECT $1::int", "returned 50 keys; dbsock kept the first 10 of them"},
	} {
		target, _, _ := strings.Cut(name, "/")
		t.Run(name, func(t *testing.T) {
			srv := sharedLocal(t, target)
			opt := pipelinetest.Loop{Settings: scenarios.Settings{N: 20, Warmup: 2, Rounds: 1, Blocks: 1, Seed: 1, OpTimeout: 30 * time.Second}, Rows: 10}
			rep, err := pipelinetest.MeasureOwn(t, target, targettest.External(target, srv), opt,
				pipelinetest.Own{Query: tc[1], KeysFrom: &pipeline.KeySource{Query: tc[0]}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Runs {
				if r.DistinctKeys < 1 || r.DistinctKeys > 10 {
					t.Errorf("%s: %d distinct keys; want at most the 10 rows asked for", r.Transport, r.DistinctKeys)
				}
			}
			if w := strings.Join(results.Texts(rep.Targets[0].Warnings), " "); !strings.Contains(w, tc[2]) {
				t.Errorf("warnings %q do not say %q", w, tc[2])
			}
		})
	}
}
