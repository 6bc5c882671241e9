package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder: another process's connection
// holds a user lock named by its token (SELECT GET_LOCK(token, 0)), which
// IS_USED_LOCK ties to its connection id, and the processlist row of that
// id says its route ("localhost" on the socket, IP:PORT over TCP). A
// MariaDB without performance_schema shows no other session's TLS, so a
// TLS connection is seen as TCP. The processlist shows admin's account
// its own connections only, so admin must be on the path the other
// process's connection claims (MariaDB's user@localhost, the socket's, is
// another account than user@127.0.0.1): a connection on another path is
// refused, never taken.
func (d *Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	connector, err := gomysql.NewConnector(Config(admin))
	if err != nil {
		return nil, fmt.Errorf("configure mysql client for %s: %w", admin, err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to mysql over %s to verify another process's connections: %w", admin, err)
	}
	return &finder{db: db}, nil
}

type finder struct{ db *sql.DB }

func (*finder) Expect(context.Context, string) error { return nil }

// Find reads which connection holds the lock claim.Token, and its host.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	var id sql.NullInt64
	if err := f.db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", claim.Token).Scan(&id); err != nil {
		return drivers.Verification{}, fmt.Errorf("IS_USED_LOCK: %w", err)
	}
	if !id.Valid {
		return drivers.Verification{}, fmt.Errorf("no connection holds the user lock %s (the agent must run SELECT GET_LOCK(token, 0) on its connection)", claim.Token)
	}
	if claim.ConnID != "" && claim.ConnID != strconv.FormatInt(id.Int64, 10) {
		return drivers.Verification{}, fmt.Errorf("the agent says its connection id is %s, the lock %s is held by connection %d", claim.ConnID, claim.Token, id.Int64)
	}
	var host string
	err := f.db.QueryRowContext(ctx, "SELECT host FROM information_schema.processlist WHERE id = ?", id.Int64).Scan(&host)
	if errors.Is(err, sql.ErrNoRows) {
		// Without the PROCESS privilege an account sees its own threads
		// only, and user@localhost (the socket) is another account than
		// user@127.0.0.1.
		return drivers.Verification{}, fmt.Errorf("connection %d holds the lock %s, but the processlist shows dbsock's account no such connection: it is another account's (on another path than the one dbsock checks, or another user)", id.Int64, claim.Token)
	}
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("read the processlist row of connection %d: %w", id.Int64, err)
	}
	v := drivers.Verification{Transport: TransportOfHost(host), Peer: host,
		Evidence: "user lock " + claim.Token + " held by connection " + strconv.FormatInt(id.Int64, 10) + ", processlist host " + host}
	if claim.LocalAddr != "" && v.Transport.Network() != "unix" && !drivers.SameAddr(claim.LocalAddr, host) {
		return v, fmt.Errorf("the agent says its connection is from %s, the server sees it from %s", claim.LocalAddr, host)
	}
	return v, nil
}

func (f *finder) Close() error { return f.db.Close() }

// AgentOp implements drivers.AgentOp: an agent runs the driver's lookup
// with each row's id, prepared once per connection in the prepared mode
// (where its library can).
func (d *Driver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Family: "mysql", Statement: d.readQuery(), NoPrepare: d.mode != ModePrepared, Key: func(id int64) any { return id }}
}

// OpenNamed implements drivers.NamedOpener: Open, then SELECT
// GET_LOCK(token, 0), the user lock Find finds it by.
func (d *Driver) OpenNamed(ctx context.Context, ep drivers.Endpoint, token string) (drivers.Conn, error) {
	c, err := d.Open(ctx, ep)
	if err != nil {
		return nil, err
	}
	mc := c.(*Conn)
	var got sql.NullInt64
	if err := mc.conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", token).Scan(&got); err != nil || got.Int64 != 1 {
		mc.Close()
		if err == nil {
			err = fmt.Errorf("GET_LOCK returned %v, not 1: another connection holds it", got)
		}
		return nil, fmt.Errorf("take the user lock %s over %s: %w", token, ep, err)
	}
	return c, nil
}

// CountOps implements drivers.OpCounter: the server's count of SELECTs,
// over every connection. An executed prepared SELECT counts there as a
// statement sent as text does (and in Com_stmt_execute as well: MariaDB
// 10.11 moved both by 100 for 100 executions, Com_select alone by 100
// for 100 text SELECTs), so Com_select counts each lookup once whichever
// protocol the client speaks; dbsock's own statements inside a block's
// window are a few (audit.go's slack).
func (f *finder) CountOps(ctx context.Context) (int64, error) {
	var name string
	var n int64
	if err := f.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name = 'Com_select'").Scan(&name, &n); err != nil {
		return 0, fmt.Errorf("SHOW GLOBAL STATUS: %w", err)
	}
	return n, nil
}

// Counter implements drivers.OpCounter.
func (*finder) Counter() string { return "Com_select" }

// CheckUse implements drivers.UseChecker with the processlist: the
// connection that holds the lock claim.Token is still the one verified
// (same id and host), and it finished its last command no longer than
// within ago (MariaDB's TIME_MS; whole seconds elsewhere).
func (f *finder) CheckUse(ctx context.Context, claim drivers.Claim, v drivers.Verification, within time.Duration) error {
	var id sql.NullInt64
	if err := f.db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", claim.Token).Scan(&id); err != nil {
		return fmt.Errorf("IS_USED_LOCK: %w", err)
	}
	if !id.Valid || (claim.ConnID != "" && claim.ConnID != strconv.FormatInt(id.Int64, 10)) {
		return fmt.Errorf("the user lock %s is held by connection %v, not the one verified (%s)", claim.Token, id, v.Evidence)
	}
	var host string
	var ms float64
	err := f.db.QueryRowContext(ctx, "SELECT host, time_ms FROM information_schema.processlist WHERE id = ?", id.Int64).Scan(&host, &ms)
	if err != nil {
		// A MySQL has no TIME_MS: its TIME counts whole seconds.
		var s int64
		if err2 := f.db.QueryRowContext(ctx, "SELECT host, time FROM information_schema.processlist WHERE id = ?", id.Int64).Scan(&host, &s); err2 != nil {
			return fmt.Errorf("read the processlist row of connection %d: %w", id.Int64, errors.Join(err, err2))
		}
		ms, within = float64(s*1000), within.Truncate(time.Second)+time.Second
	}
	if host != v.Peer {
		return fmt.Errorf("connection %d, holding the lock %s, is from %s; it was verified from %s", id.Int64, claim.Token, host, v.Peer)
	}
	if d := time.Duration(ms * float64(time.Millisecond)); d > within {
		return fmt.Errorf("the processlist shows connection %d (lock %s) idle for %s, longer than the block took (%s): it did not serve the block's lookups", id.Int64, claim.Token, d.Round(time.Millisecond), within.Round(time.Millisecond))
	}
	return nil
}
