package dbsock_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmysql"
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
	fmt.Printf("TCP p50 %d ns, Unix p50 %d ns: %s\n", s.TCP.Latency.P50, s.Unix.Latency.P50, s.VerdictKind)
}
