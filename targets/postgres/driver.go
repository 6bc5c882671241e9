// Package postgres is dbsock's driver for PostgreSQL, built on
// github.com/jackc/pgx/v5. A Unix endpoint's address is the socket file
// (DIR/.s.PGSQL.PORT); pgx is given its directory and port, as libpq is.
package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
)

// Query is the lookup of the default case; PayloadQuery reads a value of a
// chosen size. "user" is a reserved word in PostgreSQL, hence the quotes.
const (
	Query        = `SELECT nickname FROM "user" WHERE id = $1`
	PayloadQuery = `SELECT payload FROM "user" WHERE id = $1`
	LookupID     = 1
	Nickname     = "dbsock"
)

// SocketFile is the name PostgreSQL gives its socket for port.
func SocketFile(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

// seedBatch is how many rows one seeding statement writes.
const seedBatch = 100_000

// Modes: how the lookup reaches the server.
const (
	// ModePrepared prepares the lookup once per connection (a named
	// statement) and executes it per op: one round trip.
	ModePrepared = "prepared"
	// ModeExec sends the lookup's text with its argument per op as an
	// unnamed statement (pgx's QueryExecModeExec): one round trip, and no
	// named statement on the server, which a pooler in transaction mode
	// (PgBouncer before 1.21) needs.
	ModeExec = "exec"
)

// Modes lists the accepted modes.
var Modes = []string{ModePrepared, ModeExec}

// Driver is the PostgreSQL driver for one mode and value size.
type Driver struct {
	mode      string
	valueSize int
	w         drivers.Workload
	depth     int // lookups per op, in one batch (0 or 1: one)
	// Pooled says that the endpoint is a pooler (PgBouncer), which takes
	// no server settings in the startup packet.
	Pooled bool
}

// Pipeline implements drivers.Pipeliner: each op sends depth executions of
// the prepared lookup as one pgx batch (PostgreSQL's pipeline mode: all
// sent, then all read, one round trip).
func (d *Driver) Pipeline(depth int) drivers.Driver {
	c := *d
	c.depth = depth
	return &c
}

// Depth implements drivers.Pipeliner.
func (d *Driver) Depth() int { return max(d.depth, 1) }

// New returns the PostgreSQL driver in ModePrepared reading values of
// w.ValueSize bytes (the nickname when 0) from w.Rows rows.
func New(w drivers.Workload) *Driver { return NewMode(ModePrepared, w) }

// NewMode returns the PostgreSQL driver in mode (ModePrepared when "").
func NewMode(mode string, w drivers.Workload) *Driver {
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
const Update = `UPDATE "user" SET n = n + 1 WHERE id = $1`

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
	how := "prepared once per connection"
	if d.mode == ModeExec {
		how = "sent as an unnamed statement each time (pgx exec mode)"
	}
	q := drivers.DescribeStatements(d.w, "$1", LookupID, d.readQuery(), d.writeQuery())
	if d.Depth() > 1 {
		return fmt.Sprintf("%d executions of %s, %s, sent as one pgx batch (one round trip per op of %d lookups)", d.Depth(), q, how, d.Depth())
	}
	return q + " " + how + " (one round trip per op)"
}

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string {
	return "connect, startup and SCRAM authentication (TLS first on the tls path, none on the others)"
}

// Config maps an endpoint to pgx's configuration, with TLS off on both
// transports so that the comparison is of the transports alone.
func Config(ep drivers.Endpoint) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig("sslmode=disable")
	if err != nil {
		return nil, err
	}
	switch ep.Transport.Network() {
	default: // every path over TCP
		host, port, err := splitHostPort(ep.Address)
		if err != nil {
			return nil, err
		}
		cfg.Host, cfg.Port = host, port
	case "unix":
		base := filepath.Base(ep.Address)
		p, ok := strings.CutPrefix(base, ".s.PGSQL.")
		port, err := strconv.ParseUint(p, 10, 16)
		if !ok || err != nil {
			return nil, fmt.Errorf("postgres socket %q is not DIR/.s.PGSQL.PORT", ep.Address)
		}
		cfg.Host, cfg.Port = filepath.Dir(ep.Address), uint16(port)
	}
	cfg.User, cfg.Password, cfg.Database = ep.User, ep.Password, ep.Database
	cfg.ConnectTimeout = 10 * time.Second
	cfg.Fallbacks = nil
	cfg.TLSConfig = nil
	if ep.Transport.Info().TLS {
		cfg.TLSConfig = ep.TLS // sslmode=verify-full, with the endpoint's CA
	}
	return cfg, nil
}

func splitHostPort(addr string) (string, uint16, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("postgres address %q is not HOST:PORT", addr)
	}
	p, err := strconv.ParseUint(addr[i+1:], 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("postgres address %q has a bad port", addr)
	}
	return strings.Trim(addr[:i], "[]"), uint16(p), nil
}

// connect connects over ep as app (application_name; "" for a fresh one).
func (d *Driver) connect(ctx context.Context, ep drivers.Endpoint, socks *drivers.Sockets, readOnly bool, app string) (*pgx.Conn, string, error) {
	cfg, err := Config(ep)
	if err != nil {
		return nil, "", err
	}
	if socks != nil {
		cfg.DialFunc = socks.Dial
	}
	auth := watchAuth(cfg, ep)
	if d.mode == ModeExec {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	if app == "" {
		app = applicationName()
	}
	cfg.RuntimeParams["application_name"] = app
	if readOnly {
		// Your statement under --op read: every transaction of the
		// connection is read-only, so the server refuses a write (a
		// data-modifying WITH, a function that writes, nextval) with its
		// own words, before anything is timed. Set in the startup packet:
		// no round trip.
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "%!w(<nil>)") {
			// pgx's words for a reply that is not PostgreSQL's protocol.
			err = errors.New(strings.ReplaceAll(msg, "received unexpected message: %!w(<nil>)", "received a message that is not PostgreSQL's protocol"))
		}
		return nil, "", fmt.Errorf("connect to postgres over %s: %w", ep, err)
	}
	c.PgConn().Frontend().Untrace() // the ops run untraced
	auth.done = true
	return c, auth.method, nil
}

// Seed implements drivers.Driver: it creates the table and its rows
// (nothing with the user's own keys).
func (d *Driver) Seed(ctx context.Context, ep drivers.Endpoint) error {
	if !d.w.Seeds() {
		return nil
	}
	c, _, err := d.connect(ctx, ep, nil, false, "")
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS "user" (id INT PRIMARY KEY, nickname TEXT, payload BYTEA, n BIGINT NOT NULL DEFAULT 0)`,
		`ALTER TABLE "user" ADD COLUMN IF NOT EXISTS payload BYTEA`,
		`ALTER TABLE "user" ADD COLUMN IF NOT EXISTS n BIGINT NOT NULL DEFAULT 0`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("seed postgres over %s: %s: %w", ep, q, err)
		}
	}
	// The server makes the rows (generate_series), seedBatch at a time.
	value, rows := bytes.Repeat([]byte("d"), d.valueSize), d.w.RowCount()
	for lo := 1; lo <= rows; lo += seedBatch {
		hi := min(lo+seedBatch-1, rows)
		_, err = c.Exec(ctx, `INSERT INTO "user" (id, nickname, payload) SELECT g, $1::text, $2::bytea FROM generate_series($3::int, $4::int) g
			ON CONFLICT (id) DO UPDATE SET nickname = EXCLUDED.nickname, payload = EXCLUDED.payload, n = 0`, Nickname, value, lo, hi)
		if err != nil {
			return fmt.Errorf("seed postgres over %s: insert rows %d to %d of %d: %w", ep, lo, hi, rows, err)
		}
		d.w.Report(hi)
	}
	return nil
}

// Info implements drivers.Driver.
func (d *Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	c, _, err := d.connect(ctx, ep, nil, false, "")
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	defer c.Close(context.Background())
	var version, full, started string
	if err := c.QueryRow(ctx, "SELECT current_setting('server_version'), version(), pg_postmaster_start_time()::text").Scan(&version, &full, &started); err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask postgres over %s for its version: %w", ep, err)
	}
	product := "PostgreSQL"
	if v, _, ok := strings.Cut(version, " "); ok {
		version = v
	}
	return drivers.ServerInfo{Product: product, Version: version, Detail: full, Instance: "started " + started}, nil
}

// Open implements drivers.Driver: one connection, with the op's
// statements prepared in ModePrepared.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	return d.OpenNamed(ctx, ep, "")
}

// OpenNamed implements drivers.NamedOpener: the connection's
// application_name is token, which pg_stat_activity (and a pooler's SHOW
// CLIENTS) shows it by; "" is a fresh one, as Open's.
func (d *Driver) OpenNamed(ctx context.Context, ep drivers.Endpoint, token string) (drivers.Conn, error) {
	socks := drivers.SocketsFor(ep)
	c, auth, err := d.connect(ctx, ep, socks, d.w.ReadsYourQuery() && !d.Pooled, token)
	if err != nil {
		return nil, err
	}
	conn := &Conn{socks: socks, c: c, auth: auth, size: d.valueSize, depth: d.Depth(), app: c.Config().RuntimeParams["application_name"],
		custom: d.w.Query != "", w: d.w}
	conn.read, err = conn.prepare(ctx, d.mode, "lookup", d.readQuery(), ep)
	if err == nil {
		conn.write, err = conn.prepare(ctx, d.mode, "write", d.writeQuery(), ep)
	}
	if err != nil {
		c.Close(context.Background())
		return nil, err
	}
	conn.UseKeys(nil)
	if d.Pooled && d.w.ReadsYourQuery() {
		if err := conn.readOnly(ctx, d.readQuery(), ep); err != nil {
			c.Close(context.Background())
			return nil, err
		}
	}
	return conn, nil
}

// readOnly runs the user's statement q once with the first key in a
// read-only transaction that is rolled back: through a pooler, which
// passes no session setting to the server (PgBouncer refuses
// default_transaction_read_only at startup and would keep a SET for
// other clients), this is how a statement that writes is refused, with
// the server's words, before anything is timed. A statement that writes
// for some keys only is not caught.
func (c *Conn) readOnly(ctx context.Context, q string, ep drivers.Endpoint) error {
	tx, err := c.c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	rows, err := tx.Query(ctx, q, pgx.QueryExecModeExec, c.args[0])
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	if err != nil {
		return drivers.StatementError(q, ep, fmt.Errorf("run once in a read-only transaction before timing (through a pooler, which takes no read-only session): %w", err))
	}
	return nil
}

// prepare prepares q as name in ModePrepared and returns what an op
// executes: the statement's name, or q itself ("" for no q).
func (c *Conn) prepare(ctx context.Context, mode, name, q string, ep drivers.Endpoint) (string, error) {
	if q == "" || mode != ModePrepared {
		return q, nil
	}
	if _, err := c.c.Prepare(ctx, name, q); err != nil {
		if c.custom {
			return "", drivers.StatementError(q, ep, err)
		}
		return "", fmt.Errorf("prepare %q over %s: %w", q, ep, err)
	}
	return name, nil
}

// Conn is one PostgreSQL connection.
type Conn struct {
	socks *drivers.Sockets
	c     *pgx.Conn
	// read and write are what an op executes: a prepared statement's name
	// or the text; "" when the op never reads (--op update) or writes.
	read, write string
	custom      bool // the statement is the user's --query
	w           drivers.Workload
	size        int
	args        []any // the keys the next ops read, boxed before timing
	value       []byte
	depth       int
	app         string // application_name, unique to this connection
	auth        string // how the server authenticated it (authSeen)
}

// Do implements drivers.Conn: one op on the first key.
func (c *Conn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey implements drivers.Keyed: one execution of the prepared lookup of
// key i, or a batch of depth of them from key i on; or one update.
func (c *Conn) DoKey(ctx context.Context, i int, write bool) error {
	if c.read == "" {
		return c.exec(ctx, i)
	}
	if c.depth > 1 {
		return c.batch(ctx, i)
	}
	if write {
		return c.execOne(ctx, c.args[i])
	}
	if c.custom {
		rows, err := c.c.Query(ctx, c.read, c.args[i])
		if err != nil {
			return err
		}
		found := rows.Next()
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("your own op %w (no row) for key %v", drivers.ErrNoResult, c.args[i])
		}
		return nil
	}
	if err := c.c.QueryRow(ctx, c.read, c.args[i]).Scan(&c.value); err != nil {
		return err
	}
	return c.check()
}

// batch sends depth lookups, of the keys from first on, as one pgx batch.
func (c *Conn) batch(ctx context.Context, first int) error {
	b := &pgx.Batch{}
	for i := 0; i < c.depth; i++ {
		b.Queue(c.read, c.args[drivers.KeyAt(first+i, len(c.args))])
	}
	br := c.c.SendBatch(ctx, b)
	for i := 0; i < c.depth; i++ {
		if err := br.QueryRow().Scan(&c.value); err != nil {
			br.Close()
			return err
		}
		if err := c.check(); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// UseKeys implements drivers.Keyed: the keys are boxed here, so that the
// timed ops convert nothing (none: the one-row lookup's LookupID). The
// user's keys go as text, which the server converts to the parameter's
// type.
func (c *Conn) UseKeys(ids []int64) {
	if len(ids) == 0 {
		ids = []int64{LookupID}
	}
	c.args = c.args[:0]
	for _, id := range ids {
		if c.w.Keys != nil {
			c.args = append(c.args, c.w.Key(id))
		} else {
			c.args = append(c.args, int32(id))
		}
	}
}

// execOne runs the write on one row: dbsock's Update must change exactly
// that row, the user's at least one.
func (c *Conn) execOne(ctx context.Context, arg any) error {
	tag, err := c.c.Exec(ctx, c.write, arg)
	switch n := tag.RowsAffected(); {
	case err != nil:
		return err
	case c.custom && n < 1:
		return fmt.Errorf("your own op changed no row for key %v", arg)
	case !c.custom && n != 1:
		return fmt.Errorf("postgres update changed %d rows, want 1: is the row seeded?", n)
	}
	return nil
}

// exec runs the write on row first (depth of them from first on, in one
// batch).
func (c *Conn) exec(ctx context.Context, first int) error {
	if c.depth <= 1 {
		return c.execOne(ctx, c.args[first])
	}
	b := &pgx.Batch{}
	for i := 0; i < c.depth; i++ {
		b.Queue(c.write, c.args[drivers.KeyAt(first+i, len(c.args))])
	}
	br := c.c.SendBatch(ctx, b)
	for i := 0; i < c.depth; i++ {
		tag, err := br.Exec()
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("postgres update changed %d rows, want 1: is the row seeded?", tag.RowsAffected())
		}
		if err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// check verifies the value a lookup read.
func (c *Conn) check() error {
	if (c.size == 0 && string(c.value) != Nickname) || (c.size > 0 && len(c.value) != c.size) {
		return fmt.Errorf("postgres lookup returned %d bytes", len(c.value))
	}
	return nil
}

// Close implements drivers.Conn.
func (c *Conn) Close() error { return c.c.Close(context.Background()) }

// Abort implements drivers.Aborter: the socket is closed under pgx, so an
// op blocked on a hung server fails at once.
func (c *Conn) Abort() error { return c.socks.Abort() }

// ApplicationName is the application_name this connection gave the
// server: "dbsock-" and 8 random hex digits, unique to it (a pooler's
// console lists its clients by it).
func (c *Conn) ApplicationName() string { return c.app }

// applicationName is a fresh connection's application_name.
func applicationName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "dbsock-" + hex.EncodeToString(b[:])
}

// LocalAddr is the client side's address of this connection (a pooler's
// console lists its clients by it).
func (c *Conn) LocalAddr() net.Addr { return c.c.PgConn().Conn().LocalAddr() }

// ListKeys implements drivers.KeyLister: query's first column, as text, at
// most limit rows (fetched through a cursor), read in a read-only
// transaction that is rolled back.
func (d *Driver) ListKeys(ctx context.Context, ep drivers.Endpoint, query string, limit int) ([]string, error) {
	if err := drivers.CheckKeysSQL(name, query); err != nil {
		return nil, err
	}
	c, _, err := d.connect(ctx, ep, nil, false, "")
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background())
	// Through a cursor, the server sends no more than limit rows: a query
	// of millions stops there (a plain query's rest would be read and
	// thrown away).
	if _, err := tx.Exec(ctx, "DECLARE dbsock_keys NO SCROLL CURSOR FOR "+strings.TrimRight(strings.TrimSpace(query), ";")); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, "FETCH FORWARD "+strconv.Itoa(limit)+" FROM dbsock_keys", pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		return nil, err
	}
	return drivers.ScanKeys(rows, limit)
}

// CheckQuery implements drivers.QueryTaker: one $1 for the key.
func (*Driver) CheckQuery(q, op string) error { return drivers.CheckSQL(name, q, op, "$1") }

// VerifyEndpoint implements drivers.EndpointVerifier: inet_client_addr()
// of a fresh connection that prepares nothing.
func (d *Driver) VerifyEndpoint(ctx context.Context, ep drivers.Endpoint) (drivers.Verification, error) {
	c, _, err := d.connect(ctx, ep, nil, false, "")
	if err != nil {
		return drivers.Verification{}, err
	}
	defer c.Close(context.Background())
	return (&Conn{c: c}).Verify(ctx)
}
