package dbsock_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock"
)

// Connection settings for a client of the server's endpoints: here the
// Unix socket of a MySQL server, through go-sql-driver/mysql.
func ExampleMySQLConfig() {
	ep := dbsock.Endpoint{Transport: dbsock.Unix, Address: "/tmp/dbsock-1/mysql.sock", User: "app", Database: "shop"}
	cfg := dbsock.MySQLConfig(ep)
	fmt.Println(cfg.Net, cfg.Addr, cfg.User, cfg.DBName)
	// Output: unix /tmp/dbsock-1/mysql.sock app shop
}

func ExamplePostgresConfig() {
	ep := dbsock.Endpoint{Transport: dbsock.Unix, Address: "/tmp/dbsock-1/.s.PGSQL.5432", User: "app", Database: "shop"}
	cfg, err := dbsock.PostgresConfig(ep)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host, cfg.Port, cfg.User, cfg.Database, cfg.TLSConfig == nil)
	// Output: /tmp/dbsock-1 5432 app shop true
}

func ExampleRedisOptions() {
	o := dbsock.RedisOptions(dbsock.Endpoint{Transport: dbsock.TCP, Address: "127.0.0.1:6379"})
	fmt.Println(o.Network, o.Addr, o.PoolSize, o.MaxRetries)
	// Output: tcp 127.0.0.1:6379 1 -1
}

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
		c, err := gomysql.NewConnector(dbsock.MySQLConfig(ep))
		if err != nil {
			return nil, nil, err
		}
		db := sql.OpenDB(c)
		db.SetMaxOpenConns(1)
		var now string
		do := func(ctx context.Context) error { return db.QueryRowContext(ctx, "SELECT NOW(6)").Scan(&now) }
		return do, db.Close, nil
	}
	rep, err := dbsock.Compare(ctx, srv, "now", open, dbsock.CompareOptions{N: 2000})
	if err != nil {
		log.Fatal(err)
	}
	s := rep.Summary[0]
	fmt.Printf("TCP p50 %d ns, Unix p50 %d ns: %s\n", s.TCP.Latency.P50, s.Unix.Latency.P50, s.VerdictKind)
}
