package dbsockmysql_test

import (
	"database/sql"
	"fmt"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmysql"
)

// A database/sql handle on the Unix socket of a MySQL or MariaDB server.
func ExampleConfig() {
	ep := dbsock.Endpoint{Transport: dbsock.Unix, Address: "/tmp/dbsock-1/mysql.sock", User: "app", Database: "shop"}
	cfg := dbsockmysql.Config(ep)
	fmt.Println(cfg.Net, cfg.Addr, cfg.User, cfg.DBName, cfg.DialFunc != nil)
	c, err := gomysql.NewConnector(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	db := sql.OpenDB(c) // connects at its first query
	defer db.Close()
	// Output: unix /tmp/dbsock-1/mysql.sock app shop true
}
