// Package mysql is dbsock's driver for MySQL and MariaDB, built on
// github.com/go-sql-driver/mysql. Unlike the C client library, the Go driver
// never turns "localhost" into a socket: the transport is whatever the
// Endpoint says ("tcp" or "unix").
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
)

// Query is the primary-key lookup every op performs.
const Query = "SELECT nickname FROM user WHERE id = ?"

// LookupID is the primary key the op looks up.
const LookupID = 1

// Driver is the MySQL/MariaDB driver. The zero value is ready to use.
type Driver struct{}

// New returns the MySQL driver.
func New() *Driver { return &Driver{} }

// Name implements drivers.Driver.
func (*Driver) Name() string { return "mysql" }

// Describe implements drivers.Driver.
func (*Driver) Describe() string {
	return "`" + strings.Replace(Query, "?", fmt.Sprint(LookupID), 1) + "` with a statement prepared once per connection (one round trip per op)"
}

// Config maps an endpoint to the Go driver's configuration.
func Config(ep drivers.Endpoint) *gomysql.Config {
	cfg := gomysql.NewConfig()
	cfg.Net = string(ep.Transport)
	cfg.Addr = ep.Address
	cfg.User = ep.User
	cfg.Passwd = ep.Password
	cfg.DBName = ep.Database
	cfg.Timeout = 10 * time.Second
	cfg.AllowNativePasswords = true
	return cfg
}

func openDB(ep drivers.Endpoint) (*sql.DB, error) {
	connector, err := gomysql.NewConnector(Config(ep))
	if err != nil {
		return nil, fmt.Errorf("configure mysql client for %s: %w", ep, err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// Seed implements drivers.Driver: it creates the table and the looked-up row.
func (*Driver) Seed(ctx context.Context, ep drivers.Endpoint) error {
	db, err := openDB(ep)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS `user` (id INT PRIMARY KEY, nickname VARCHAR(64))",
		fmt.Sprintf("REPLACE INTO `user` (id, nickname) VALUES (%d, 'dbsock')", LookupID),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("seed mysql over %s: %s: %w", ep, q, err)
		}
	}
	return nil
}

// Info implements drivers.Driver.
func (*Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	db, err := openDB(ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	defer db.Close()
	var version, comment string
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment").Scan(&version, &comment); err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask mysql over %s for its version: %w", ep, err)
	}
	return ParseVersion(version, comment), nil
}

// ParseVersion names the product behind a MySQL-protocol server from
// VERSION() and @@version_comment.
func ParseVersion(version, comment string) drivers.ServerInfo {
	info := drivers.ServerInfo{Product: "MySQL", Version: version, Detail: strings.TrimSpace(version + " " + comment)}
	lower := strings.ToLower(version + " " + comment)
	switch {
	case strings.Contains(lower, "mariadb"):
		info.Product = "MariaDB"
	case strings.Contains(lower, "percona"):
		info.Product = "Percona Server"
	}
	if i := strings.IndexByte(version, '-'); i > 0 {
		info.Version = version[:i]
	}
	return info
}

// Open implements drivers.Driver: one dedicated connection with the lookup
// prepared on it.
func (*Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	db, err := openDB(ep)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to mysql over %s: %w", ep, err)
	}
	stmt, err := conn.PrepareContext(ctx, Query)
	if err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("prepare %q over %s: %w", Query, ep, err)
	}
	return &Conn{db: db, conn: conn, stmt: stmt, arg: int64(LookupID)}, nil
}

// Conn is one MySQL connection with the lookup statement prepared.
type Conn struct {
	db   *sql.DB
	conn *sql.Conn
	stmt *sql.Stmt
	arg  any
}

// Do implements drivers.Conn: one execution of the prepared lookup.
func (c *Conn) Do(ctx context.Context) error {
	var nickname string
	err := c.stmt.QueryRowContext(ctx, c.arg).Scan(&nickname)
	if err == nil && nickname == "" {
		return errors.New("mysql lookup returned an empty nickname")
	}
	return err
}

// Verify implements drivers.Conn using the server's processlist: MySQL and
// MariaDB report "localhost" for a socket client and "IP:port" for TCP.
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	var host string
	err := c.conn.QueryRowContext(ctx,
		"SELECT host FROM information_schema.processlist WHERE id = CONNECTION_ID()").Scan(&host)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("read processlist host: %w", err)
	}
	return drivers.Verification{Transport: TransportOfHost(host), Evidence: "processlist host " + host}, nil
}

// TransportOfHost classifies a processlist host: "host:port" is TCP, a bare
// host name ("localhost") is a Unix socket.
func TransportOfHost(host string) drivers.Transport {
	if i := strings.LastIndexByte(host, ':'); i > 0 && i < len(host)-1 {
		return drivers.TCP
	}
	return drivers.Unix
}

// Close implements drivers.Conn.
func (c *Conn) Close() error {
	return errors.Join(c.stmt.Close(), c.conn.Close(), c.db.Close())
}
