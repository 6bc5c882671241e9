// Package orders is what a Go developer copies to measure their own
// PostgreSQL table and query (pgx) over TCP and a Unix socket, in their own
// test suite: a test with dbsock.Compare (paired statistics, both
// transports verified on the server side) and a benchmark for benchstat.
//
//	go test ./orders                                   # the test
//	go test -run '^$' -bench . -count 10 ./orders | benchstat -col /transport -
package orders

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockpg"
	"github.com/dbsock/dbsock/dbsocktest"
)

// seed makes the table this example queries: your schema goes here. The
// PostgreSQL dbsock starts keeps its data over the restarts between server
// instances, so seeding once is enough.
func seed(tb testing.TB, srv *dbsock.Server) {
	ctx := context.Background()
	conn := connect(tb, srv.Unix)
	defer conn.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS orders (id int PRIMARY KEY, customer text, total numeric(10,2))",
		"INSERT INTO orders SELECT i, 'customer ' || i % 97, i * 1.25 FROM generate_series(1, 1000) i ON CONFLICT DO NOTHING",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			tb.Fatal(err)
		}
	}
}

func connect(tb testing.TB, ep dbsock.Endpoint) *pgx.Conn {
	cfg, err := dbsockpg.Config(ep) // pgx, dialing through dbsock.Dial(ep)
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return conn
}

// lookup is your query, as dbsock times it: one call of do is one op.
func lookup(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
	cfg, err := dbsockpg.Config(ep)
	if err != nil {
		return nil, nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	var customer string
	var total float64
	id := 0
	do := func(ctx context.Context) error {
		id = id%1000 + 1
		return conn.QueryRow(ctx, "SELECT customer, total FROM orders WHERE id = $1", id).Scan(&customer, &total)
	}
	return do, func() error { return conn.Close(context.Background()) }, nil
}

// TestOrderLookupOverBothTransports measures the query as dbsock run
// measures (CompareOptions' zero values are run's defaults) and checks that
// it really ran over each transport: every run verified, no op failed,
// and an interval for the speedup.
func TestOrderLookupOverBothTransports(t *testing.T) {
	srv := dbsocktest.Start(t, "postgres", dbsock.StartOptions{})
	seed(t, srv)
	rep, err := dbsock.Compare(context.Background(), srv, "order-by-id", lookup, dbsock.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[dbsock.Transport]bool{}
	for _, r := range rep.Runs {
		if !r.TransportVerified || r.Errors != 0 {
			t.Errorf("%s instance %d: verified %v (%s), %d errors", r.Transport, r.Instance, r.TransportVerified, r.Evidence, r.Errors)
		}
		seen[r.Transport] = true
	}
	if !seen[dbsock.TCP] || !seen[dbsock.Unix] {
		t.Fatalf("transports measured: %v", seen)
	}
	if v := rep.Environment.Drivers["github.com/jackc/pgx/v5"]; v == "" {
		t.Errorf("the report's environment does not name pgx's version: %v", rep.Environment.Drivers)
	}
	s := rep.Summary[0]
	c := s.Against(dbsock.Unix) // the socket against TCP
	if c.SpeedupP50CI == nil || c.Verdict == "" {
		t.Fatalf("no interval or no verdict: %+v", s)
	}
	t.Logf("%s: TCP p50 %d ns, Unix p50 %d ns, speedup %.2f× (%.2f–%.2f) over %d server instances: %s",
		s.Target, s.Side(dbsock.TCP).Latency.P50, s.Side(dbsock.Unix).Latency.P50, c.SpeedupP50, c.SpeedupP50CI.Lo, c.SpeedupP50CI.Hi, rep.Config.Instances, c.Verdict)
}

// BenchmarkOrderLookup is the same query as sub-benchmarks transport=tcp
// and transport=unix, interleaved and verified.
func BenchmarkOrderLookup(b *testing.B) {
	srv := dbsocktest.Start(b, "postgres", dbsock.StartOptions{})
	seed(b, srv)
	dbsocktest.Benchmark(b, srv, lookup)
}
