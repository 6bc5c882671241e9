package dbsock_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmysql"
	"github.com/dbsock/dbsock/results"
)

// Compare your own query over both transports of a MySQL server, with the
// statistics of "dbsock run".
func ExampleCompare() {
	ctx := context.Background()
	srv, err := dbsock.Start(ctx, "mysql", dbsock.StartOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	open := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		c, err := gomysql.NewConnector(dbsockmysql.Config(ep))
		if err != nil {
			return nil, nil, err
		}
		db := sql.OpenDB(c)
		db.SetMaxOpenConns(1)
		var now string
		do := func(ctx context.Context) error { return db.QueryRowContext(ctx, "SELECT NOW(6)").Scan(&now) }
		return do, db.Close, nil
	}
	rep, err := dbsock.Compare(ctx, srv, "now", open, dbsock.CompareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	s := rep.Summary[0]
	fmt.Printf("TCP p50 %d ns, Unix p50 %d ns: %s\n", s.Side(dbsock.TCP).Latency.P50, s.Side(dbsock.Unix).Latency.P50, s.Against(dbsock.Unix).VerdictKind)
	// A gate: the socket is at least 5% faster, with 95% confidence.
	if err := dbsock.AtLeast(rep, 1.05); err != nil {
		log.Fatal(err)
	}
}

// Gate on the least speedup worth having, not on "faster at all". This
// report is what Compare gave for a heavier JOIN: its interval is above 1,
// so a gate on Lo > 1 passes, but nothing shows the 5% asked for. A report
// of nothing (a skipped test's) fails every gate.
func ExampleAtLeast() {
	rep := &dbsock.Report{Summary: []dbsock.Summary{{
		Case: results.Case{Target: "heavier-join"},
		Comparisons: []dbsock.Comparison{{Path: dbsock.Unix, Baseline: dbsock.TCP,
			SpeedupP50: 1.014, SpeedupP50CI: &dbsock.Interval{Center: 1.014, Lo: 1.004, Hi: 1.052}}},
	}}}
	fmt.Println("faster at all:", dbsock.AtLeast(rep, 1))
	fmt.Println("5% faster:", dbsock.AtLeast(rep, 1.05))
	fmt.Println("nothing measured:", dbsock.AtLeast(nil, 1.05))
	// Output:
	// faster at all: <nil>
	// 5% faster: heavier-join: the Unix socket's p50 speedup over TCP is 1.014× (1.004–1.052, 95%): the interval's low end 1.004 is under the least asked, 1.05×
	// nothing measured: dbsock.AtLeast: the report has no case, so nothing shows a speedup: was nothing measured (a skipped test, a Compare that failed)?
}
