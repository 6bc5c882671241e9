// Package mysql is dbsock's driver for MySQL and MariaDB, built on
// github.com/go-sql-driver/mysql. Unlike the C client library, the Go driver
// never turns "localhost" into a socket: the transport is whatever the
// Endpoint says ("tcp" or "unix").
package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
)

// Quiet stops the MySQL driver from printing its own log lines (such as
// "[mysql] packets.go:58 unexpected EOF" when a server goes away) on
// stderr: dbsock reports such failures itself, with what to do.
func Quiet() { _ = gomysql.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Print(...any) {}

// Query is the primary-key lookup of the default case; PayloadQuery reads a
// value of a chosen size instead.
const (
	Query        = "SELECT nickname FROM user WHERE id = ?"
	PayloadQuery = "SELECT payload FROM user WHERE id = ?"
)

// LookupID is the primary key a one-row lookup reads (the op reads ids
// 1..Rows, handed to it by UseKeys); Nickname is every row's value.
const (
	LookupID = 1
	Nickname = "dbsock"
)

// Modes: how a lookup with an argument reaches the server.
const (
	// ModePrepared prepares the statement once per connection and executes
	// it per op: one round trip.
	ModePrepared = "prepared"
	// ModeInterpolate lets the driver put the argument into the SQL text
	// (interpolateParams=true): one round trip.
	ModeInterpolate = "interpolate"
	// ModeDefault is what db.QueryRow(sql, args...) does without
	// interpolateParams: prepare, execute and close per op, two round trips.
	ModeDefault = "default"
)

// Modes lists the accepted modes.
var Modes = []string{ModePrepared, ModeInterpolate, ModeDefault}

// Driver is the MySQL/MariaDB driver for one mode and value size.
type Driver struct {
	mode      string
	valueSize int // 0: the nickname
	w         drivers.Workload
}

// New returns the MySQL driver in mode (ModePrepared when "") reading
// values of w.ValueSize bytes (the 6-byte nickname when 0) from w.Rows rows.
func New(mode string, w drivers.Workload) *Driver {
	if mode == "" {
		mode = ModePrepared
	}
	return &Driver{mode: mode, valueSize: w.ValueSize, w: w}
}

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (d *Driver) Mode() string { return d.mode }

// ValueSize implements drivers.Driver.
func (d *Driver) ValueSize() int {
	if d.valueSize == 0 {
		return len(Nickname)
	}
	return d.valueSize
}

// Update is the op of --op update: one row's counter up by one.
const Update = "UPDATE user SET n = n + 1 WHERE id = ?"

// readQuery is the op's read ("" under --op update): the user's --query,
// or the lookup.
func (d *Driver) readQuery() string {
	if d.valueSize > 0 {
		return d.w.ReadStatement(PayloadQuery)
	}
	return d.w.ReadStatement(Query)
}

// writeQuery is the op's write ("" unless the workload writes).
func (d *Driver) writeQuery() string { return d.w.WriteStatement(Update) }

// Describe implements drivers.Driver.
func (d *Driver) Describe() string {
	q := drivers.DescribeStatements(d.w, "?", LookupID, d.readQuery(), d.writeQuery())
	switch d.mode {
	case ModeInterpolate:
		return q + " with the argument interpolated by the driver (one round trip per op)"
	case ModeDefault:
		return q + " as db.QueryRow(sql, args...) sends it: prepare, execute, close per op (two round trips)"
	}
	return q + " with a statement prepared once per connection (one round trip per op)"
}

// ConnectPhase implements drivers.Driver.
func (d *Driver) ConnectPhase() string {
	s := "connect, MySQL handshake and authentication"
	if d.w.ReadsYourQuery() {
		s += ", SET SESSION TRANSACTION READ ONLY (your own query, when the op only reads)"
	}
	if d.mode == ModePrepared {
		s += ", and preparing the statement"
	}
	return s
}

// Config maps an endpoint to the Go driver's configuration.
func Config(ep drivers.Endpoint) *gomysql.Config {
	cfg := gomysql.NewConfig()
	cfg.Net = ep.Transport.Network()
	cfg.Addr = ep.Address
	cfg.User = ep.User
	cfg.Passwd = ep.Password
	cfg.DBName = ep.Database
	cfg.Timeout = 10 * time.Second
	cfg.AllowNativePasswords = true
	if ep.Transport.Info().TLS {
		cfg.TLS = ep.TLS // and no fallback to plain: a server without TLS is an error
	}
	return cfg
}

func (d *Driver) openDB(ep drivers.Endpoint, socks *drivers.Sockets, readOnly bool) (*sql.DB, error) {
	cfg := Config(ep)
	if socks != nil {
		cfg.DialFunc = socks.Dial
	}
	cfg.InterpolateParams = d.mode == ModeInterpolate
	connector, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("configure mysql client for %s: %w", ep, err)
	}
	if readOnly {
		connector = readOnlySession{connector}
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// payload is the value of a given size the payload lookups read.
func payload(n int) []byte { return bytes.Repeat([]byte("d"), n) }

// Seed implements drivers.Driver: it creates the table and its rows, with
// a payload of the driver's value size (nothing with the user's own keys).
func (d *Driver) Seed(ctx context.Context, ep drivers.Endpoint) error {
	if !d.w.Seeds() {
		return nil
	}
	db, err := d.openDB(ep, nil, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS user (id INT PRIMARY KEY, nickname VARCHAR(64), payload LONGBLOB, n BIGINT NOT NULL DEFAULT 0)"); err != nil {
		return fmt.Errorf("seed mysql over %s: create table user: %w", ep, err)
	}
	// A table from an older dbsock may lack the payload and counter columns.
	for _, col := range []string{"payload LONGBLOB", "n BIGINT NOT NULL DEFAULT 0"} {
		if _, err := db.ExecContext(ctx, "ALTER TABLE user ADD COLUMN "+col); err != nil {
			var me *gomysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1060 { // 1060: duplicate column
				return fmt.Errorf("seed mysql over %s: add column %s: %w", ep, col, err)
			}
		}
	}
	return d.insertRows(ctx, db, ep)
}

// seedBatch is how many rows one seeding statement writes.
const seedBatch = 500

// insertRows writes rows 1..Rows, seedBatch to a multi-row REPLACE (so
// that a second run over the same table is the same table).
func (d *Driver) insertRows(ctx context.Context, db *sql.DB, ep drivers.Endpoint) error {
	value := payload(d.valueSize)
	rows := d.w.RowCount()
	stmt := func(n int) string {
		return "REPLACE INTO user (id, nickname, payload) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ")
	}
	full := stmt(seedBatch)
	args := make([]any, 0, 3*seedBatch)
	for lo := 1; lo <= rows; lo += seedBatch {
		n := min(seedBatch, rows-lo+1)
		args = args[:0]
		for id := lo; id < lo+n; id++ {
			args = append(args, id, Nickname, value)
		}
		q := full
		if n < seedBatch {
			q = stmt(n)
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("seed mysql over %s: insert rows %d to %d of %d: %w", ep, lo, lo+n-1, rows, err)
		}
		d.w.Report(lo + n - 1)
	}
	return nil
}

// Info implements drivers.Driver.
func (d *Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	db, err := d.openDB(ep, nil, false)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	defer db.Close()
	var version, comment, host, datadir string
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment, @@hostname, @@datadir").Scan(&version, &comment, &host, &datadir); err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask mysql over %s for its version: %w", ep, err)
	}
	info := ParseVersion(version, comment)
	info.Instance = "data directory " + host + ":" + datadir
	return info, nil
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

// Open implements drivers.Driver: one dedicated connection, with the op's
// statements prepared on it in ModePrepared.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	socks := drivers.SocketsFor(ep)
	ep.TLS = drivers.TracedTLS(ctx, ep.TLS) // go-sql-driver runs the handshake itself
	db, err := d.openDB(ep, socks, d.w.ReadsYourQuery())
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to mysql over %s: %w", ep, err)
	}
	c := &Conn{socks: socks, db: db, conn: conn, size: d.valueSize, custom: d.w.Query != "", w: d.w}
	c.read, err = c.statement(ctx, d.mode, d.readQuery(), ep)
	if err == nil {
		c.write, err = c.statement(ctx, d.mode, d.writeQuery(), ep)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.UseKeys(nil)
	return c, nil
}

// statement is one of a conn's statements: its text, prepared in
// ModePrepared.
type statement struct {
	text string
	stmt *sql.Stmt // nil unless ModePrepared
}

// statement prepares q in ModePrepared (nil for no q).
func (c *Conn) statement(ctx context.Context, mode, q string, ep drivers.Endpoint) (*statement, error) {
	if q == "" {
		return nil, nil
	}
	s := &statement{text: q}
	if mode == ModePrepared {
		var err error
		if s.stmt, err = c.conn.PrepareContext(ctx, q); err != nil {
			if c.custom {
				return nil, drivers.StatementError(q, ep, err)
			}
			return nil, fmt.Errorf("prepare %q over %s: %w", q, ep, err)
		}
	}
	return s, nil
}

// LocalAddr is the client's own address of the connection (nil before
// one is dialed), which a proxy in front of the server lists it by.
func (c *Conn) LocalAddr() net.Addr { return c.socks.LocalAddr() }

// Conn is one MySQL connection.
type Conn struct {
	socks       *drivers.Sockets
	db          *sql.DB
	conn        *sql.Conn
	read, write *statement // nil: the op never reads (--op update), never writes
	custom      bool       // the statement is the user's --query
	w           drivers.Workload
	args        []any // the keys the next ops read, boxed before timing
	size        int
	value       []byte
}

// Do implements drivers.Conn: one op on the first key.
func (c *Conn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey implements drivers.Keyed: one lookup of key i, or one update.
func (c *Conn) DoKey(ctx context.Context, i int, write bool) error {
	if c.read == nil || write {
		return c.exec(ctx, c.args[i])
	}
	if c.custom {
		return c.lookupAny(ctx, c.args[i])
	}
	var row *sql.Row
	if c.read.stmt != nil {
		row = c.read.stmt.QueryRowContext(ctx, c.args[i])
	} else {
		row = c.conn.QueryRowContext(ctx, c.read.text, c.args[i])
	}
	if err := row.Scan(&c.value); err != nil {
		return err
	}
	if want := c.size; (want == 0 && string(c.value) != Nickname) || (want > 0 && len(c.value) != want) {
		return fmt.Errorf("mysql lookup returned %d bytes, want %d", len(c.value), max(want, len(Nickname)))
	}
	return nil
}

// lookupAny runs the user's read; it must return a row.
func (c *Conn) lookupAny(ctx context.Context, arg any) error {
	var rows *sql.Rows
	var err error
	if c.read.stmt != nil {
		rows, err = c.read.stmt.QueryContext(ctx, arg)
	} else {
		rows, err = c.conn.QueryContext(ctx, c.read.text, arg)
	}
	if err != nil {
		return err
	}
	found := rows.Next()
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("your own op %w (no row) for key %v", drivers.ErrNoResult, arg)
	}
	return nil
}

// exec runs the write on one row: dbsock's Update must change exactly
// that row, the user's at least one.
func (c *Conn) exec(ctx context.Context, arg any) error {
	var res sql.Result
	var err error
	if c.write.stmt != nil {
		res, err = c.write.stmt.ExecContext(ctx, arg)
	} else {
		res, err = c.conn.ExecContext(ctx, c.write.text, arg)
	}
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return err
	case c.custom && n < 1:
		return fmt.Errorf("your own op changed no row for key %v", arg)
	case !c.custom && n != 1:
		return fmt.Errorf("mysql update changed %d rows, want 1: is the row seeded?", n)
	}
	return nil
}

// Abort implements drivers.Aborter: database/sql's Close waits for the
// query in flight, so a hung server's socket is closed under it.
func (c *Conn) Abort() error { return c.socks.Abort() }

// UseKeys implements drivers.Keyed: the keys are boxed here, so that the
// timed ops convert nothing.
func (c *Conn) UseKeys(ids []int64) {
	c.args = c.args[:0]
	for _, id := range ids {
		c.args = append(c.args, c.w.Arg(id))
	}
	if len(c.args) == 0 {
		c.args = append(c.args, c.w.Arg(LookupID))
	}
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
	status := map[string]string{}
	rows, err := c.conn.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("read the session's Ssl_version and Ssl_cipher: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return drivers.Verification{}, fmt.Errorf("read the session's Ssl_version and Ssl_cipher: %w", err)
		}
		status[k] = v
	}
	if err := rows.Err(); err != nil {
		return drivers.Verification{}, fmt.Errorf("read the session's Ssl_version and Ssl_cipher: %w", err)
	}
	v := Verified(host, status["Ssl_version"], status["Ssl_cipher"])
	// The account's authentication plugin, which the server used: an
	// account may read its own CREATE USER (it holds a password hash,
	// which is read for the plugin's name and dropped).
	var create string
	if err := c.conn.QueryRowContext(ctx, "SHOW CREATE USER CURRENT_USER()").Scan(&create); err == nil {
		v.Negotiated.Auth = AuthPlugin(create)
	}
	return v, nil
}

// AuthPlugin is the authentication plugin a SHOW CREATE USER statement
// names: MySQL's "IDENTIFIED WITH 'caching_sha2_password' AS ...",
// MariaDB's "IDENTIFIED VIA ed25519 USING ..." or "IDENTIFIED BY
// PASSWORD '*...'" (mysql_native_password); "" when it names none.
func AuthPlugin(create string) string {
	_, rest, ok := strings.Cut(create, " IDENTIFIED ")
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(rest, "BY PASSWORD"), strings.HasPrefix(rest, "BY "):
		return "mysql_native_password"
	case strings.HasPrefix(rest, "WITH "), strings.HasPrefix(rest, "VIA "):
		name := strings.Fields(rest[4:])
		if len(name) == 0 {
			return ""
		}
		return strings.Trim(name[0], "'`\"")
	}
	return ""
}

// Verified is the transport of a session whose processlist host is host
// and whose Ssl_version and Ssl_cipher are version and cipher (empty for a
// plain session): TLS for a TCP session the server encrypts.
func Verified(host, version, cipher string) drivers.Verification {
	v := drivers.Verification{Transport: TransportOfHost(host), Evidence: "processlist host " + host, Peer: host}
	if version == "" {
		v.Evidence += ", Ssl_version empty (not encrypted)"
		return v
	}
	v.Evidence += ", Ssl_version " + version + ", Ssl_cipher " + cipher
	v.Transport = v.Transport.Secured()
	v.Negotiated = drivers.Negotiated{TLSVersion: strings.Replace(version, "TLSv", "TLS ", 1), TLSCipher: cipher}
	return v
}

// TransportOfHost classifies a processlist host: "host:port" is TCP
// ("::1:port" TCP6), a bare host name ("localhost") is a Unix socket.
func TransportOfHost(host string) drivers.Transport {
	if i := strings.LastIndexByte(host, ':'); i > 0 && i < len(host)-1 {
		return drivers.ClassifyPeer(host, false)
	}
	return drivers.ClassifyPeer("", false)
}

// Close implements drivers.Conn.
func (c *Conn) Close() error {
	var errs []error
	for _, st := range []*statement{c.read, c.write} {
		if st != nil && st.stmt != nil {
			errs = append(errs, st.stmt.Close())
		}
	}
	return errors.Join(append(errs, c.conn.Close(), c.db.Close())...)
}

// ListKeys implements drivers.KeyLister: query's first column, as text, at
// most limit rows, read in a read-only transaction that is rolled back.
func (d *Driver) ListKeys(ctx context.Context, ep drivers.Endpoint, query string, limit int) ([]string, error) {
	if err := drivers.CheckKeysSQL(name, query); err != nil {
		return nil, err
	}
	db, err := d.openDB(ep, nil, false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// As a derived table with a LIMIT, the server sends no more than limit
	// rows: a query of millions stops there (the driver would read the
	// rest of a plain query's rows and throw them away).
	limited := fmt.Sprintf("SELECT * FROM (%s) AS dbsock_keys LIMIT %d", strings.TrimRight(strings.TrimSpace(query), ";"), limit)
	rows, err := tx.QueryContext(ctx, limited)
	if err != nil {
		return nil, err
	}
	return drivers.ScanKeys(rows, limit)
}

// readOnlySession makes every connection of its connector read-only (SET SESSION
// TRANSACTION READ ONLY, which MySQL and MariaDB both take), for your
// statement under --op read: the server then refuses a write, e.g. a
// function that inserts, with its own words, before anything is timed.
type readOnlySession struct{ driver.Connector }

// Connect implements driver.Connector.
func (r readOnlySession) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := c.(driver.ExecerContext)
	if !ok {
		c.Close()
		return nil, errors.New("the mysql driver cannot run SET SESSION TRANSACTION READ ONLY")
	}
	if _, err := ex.ExecContext(ctx, "SET SESSION TRANSACTION READ ONLY", nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("make the session read-only (your own op, a read): %w", err)
	}
	return c, nil
}

// CheckQuery implements drivers.QueryTaker: one ? for the key.
func (*Driver) CheckQuery(q, op string) error { return drivers.CheckSQL(name, q, op, "?") }

// VerifyEndpoint implements drivers.EndpointVerifier: the processlist
// host of a fresh connection that prepares nothing.
func (d *Driver) VerifyEndpoint(ctx context.Context, ep drivers.Endpoint) (drivers.Verification, error) {
	db, err := d.openDB(ep, nil, false)
	if err != nil {
		return drivers.Verification{}, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("connect to mysql over %s: %w", ep, err)
	}
	defer conn.Close()
	return (&Conn{conn: conn}).Verify(ctx)
}
