// Package dbsockmysql points github.com/go-sql-driver/mysql at a dbsock
// endpoint, and makes the mysql target known to dbsock.Start.
package dbsockmysql

import (
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/targets/mysql" // registers the mysql target
)

// Config is a go-sql-driver/mysql configuration for ep (use it with
// mysql.NewConnector and sql.OpenDB); it dials through dbsock.Dial.
func Config(ep dbsock.Endpoint) *gomysql.Config {
	cfg := mysql.Config(ep)
	cfg.DialFunc = dbsock.Dial(ep)
	return cfg
}
