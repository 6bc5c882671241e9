// Package yourquery is what a Go developer would copy to measure their own
// table and query over TCP and a Unix socket, in their own test suite: a
// test with dbsock.Compare (paired statistics, both transports verified)
// and benchmarks for benchstat.
//
//	go test ./...                                            # the test
//	go test -run '^$' -bench . -count 10 | benchstat -col /transport -
package yourquery

import (
	"context"
	"database/sql"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmysql"
	"github.com/dbsock/dbsock/clients/dbsockredis"
	"github.com/dbsock/dbsock/dbsocktest"
)

// seed makes the table this example queries: your schema goes here.
func seed(tb testing.TB, srv *dbsock.Server) {
	db, err := open(srv.Unix)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS orders (id INT PRIMARY KEY, customer VARCHAR(64), total DECIMAL(10,2))",
		"REPLACE INTO orders SELECT seq, CONCAT('customer ', seq % 97), seq * 1.25 FROM seq_1_to_1000",
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
}

// open is your database/sql handle on an endpoint; dbsock.MySQLConfig
// points the driver at it (and lets dbsock check where it connected).
func open(ep dbsock.Endpoint) (*sql.DB, error) {
	c, err := gomysql.NewConnector(dbsockmysql.Config(ep))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	return db, nil
}

// lookup is your query, as dbsock times it: one call is one op.
func lookup() dbsock.Opener {
	return func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		db, err := open(ep)
		if err != nil {
			return nil, nil, err
		}
		stmt, err := db.PrepareContext(ctx, "SELECT customer, total FROM orders WHERE id = ?")
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		var customer string
		var total float64
		id := 0
		do := func(ctx context.Context) error {
			id = id%1000 + 1
			return stmt.QueryRowContext(ctx, id).Scan(&customer, &total)
		}
		return do, func() error { stmt.Close(); return db.Close() }, nil
	}
}

// TestYourQueryOverBothTransports measures the query over both transports
// with dbsock's paired blocks, and checks that it really ran over each:
// every run verified, no op failed, and an interval for the speedup.
func TestYourQueryOverBothTransports(t *testing.T) {
	srv := dbsocktest.Start(t, "mysql", dbsock.StartOptions{})
	seed(t, srv)
	rep, err := dbsock.Compare(context.Background(), srv, "orders-by-id", lookup(), dbsock.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[dbsock.Transport]bool{}
	for _, r := range rep.Runs {
		if !r.TransportVerified || r.Errors != 0 {
			t.Errorf("%s round %d: verified %v (%s), %d errors", r.Transport, r.Round, r.TransportVerified, r.Evidence, r.Errors)
		}
		seen[r.Transport] = true
	}
	if !seen[dbsock.TCP] || !seen[dbsock.Unix] {
		t.Fatalf("transports measured: %v", seen)
	}
	s := rep.Summary[0]
	if s.UnixSpeedupP50CI == nil {
		t.Fatal("no interval for the speedup")
	}
	t.Logf("%s: TCP p50 %d ns, Unix p50 %d ns, speedup %.2f (%.2f to %.2f), %s",
		s.Target, s.TCP.Latency.P50, s.Unix.Latency.P50, s.UnixSpeedupP50, s.UnixSpeedupP50CI.Lo, s.UnixSpeedupP50CI.Hi, s.VerdictKind)
}

// BenchmarkYourQuery is the same query as sub-benchmarks transport=tcp and
// transport=unix.
func BenchmarkYourQuery(b *testing.B) {
	srv := dbsocktest.Start(b, "mysql", dbsock.StartOptions{})
	seed(b, srv)
	dbsocktest.Benchmark(b, srv, lookup())
}

// BenchmarkYourRedisGet is a go-redis GET, the same way.
func BenchmarkYourRedisGet(b *testing.B) {
	srv := dbsocktest.Start(b, "redis", dbsock.StartOptions{})
	setup := redis.NewClient(dbsockredis.Options(srv.Unix))
	if err := setup.Set(context.Background(), "session:42", "payload", 0).Err(); err != nil {
		b.Fatal(err)
	}
	setup.Close()
	dbsocktest.Benchmark(b, srv, func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		c := redis.NewClient(dbsockredis.Options(ep))
		return func(ctx context.Context) error { return c.Get(ctx, "session:42").Err() }, c.Close, nil
	})
}
