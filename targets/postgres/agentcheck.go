package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder: another process's connection
// carries its token as its application_name, and pg_stat_activity shows
// each session's client_addr and client_port (NULL and -1 on the socket)
// with pg_stat_ssl beside it.
func (*Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	cfg, err := Config(admin)
	if err != nil {
		return nil, err
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres over %s to verify another process's connections: %w", admin, err)
	}
	f, err := withSessions(ctx, &finder{c: c})
	if err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("ask postgres over %s what it counts: %w", admin, err)
	}
	return f, nil
}

type finder struct{ c *pgx.Conn }

func (*finder) Expect(context.Context, string) error { return nil }

// Find reads the one session whose application_name is claim.Token.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	rows, err := f.c.Query(ctx, `SELECT a.pid, host(a.client_addr), a.client_port, s.ssl, s.version, s.cipher
		FROM pg_stat_activity a JOIN pg_stat_ssl s ON s.pid = a.pid WHERE a.application_name = $1`, claim.Token)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("read pg_stat_activity: %w", err)
	}
	defer rows.Close()
	var v drivers.Verification
	n := 0
	for rows.Next() {
		var pid int32
		var addr, version, cipher *string
		var port *int32
		var ssl bool
		if err := rows.Scan(&pid, &addr, &port, &ssl, &version, &cipher); err != nil {
			return v, fmt.Errorf("read pg_stat_activity: %w", err)
		}
		n++
		v = Verified(addr, ssl, version, cipher, drivers.Negotiated{})
		v.Evidence = "pg_stat_activity pid " + strconv.Itoa(int(pid)) + ": " + v.Evidence
		if port != nil && addr != nil {
			v.Peer = *addr + ":" + strconv.Itoa(int(*port))
			v.Evidence += ", client_port = " + strconv.Itoa(int(*port))
		}
		if claim.ConnID != "" && claim.ConnID != strconv.Itoa(int(pid)) {
			return v, fmt.Errorf("the agent says its backend pid is %s, the session with its application_name has pid %d", claim.ConnID, pid)
		}
	}
	if err := rows.Err(); err != nil {
		return v, fmt.Errorf("read pg_stat_activity: %w", err)
	}
	if n != 1 {
		return v, fmt.Errorf("pg_stat_activity has %d sessions with application_name %s; one is the protocol (the agent sets application_name to its token)", n, claim.Token)
	}
	return v, nil
}

func (f *finder) Close() error { return f.c.Close(context.Background()) }

// AgentOp implements drivers.AgentOp: an agent runs the driver's lookup
// with each row's id, prepared once per connection unless the driver's
// mode sends it as an unnamed statement each time (exec, as through
// PgBouncer).
func (d *Driver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Family: "postgres", Statement: d.readQuery(), NoPrepare: d.mode == ModeExec, Key: func(id int64) any { return id }}
}

// CheckUse implements drivers.UseChecker with pg_stat_activity: the
// session whose application_name is claim.Token is still the one
// verified (same backend and client address), and its last query started
// within the last within, by the server's own clock.
func (f *finder) CheckUse(ctx context.Context, claim drivers.Claim, v drivers.Verification, within time.Duration) error {
	var (
		pid  int32
		addr *string
		port *int32
		age  float64
	)
	err := f.c.QueryRow(ctx, `SELECT pid, host(client_addr), client_port,
		COALESCE(EXTRACT(epoch FROM clock_timestamp() - query_start), 1e9)::float8
		FROM pg_stat_activity WHERE application_name = $1`, claim.Token).Scan(&pid, &addr, &port, &age)
	if err != nil {
		return fmt.Errorf("read pg_stat_activity for the session with application_name %s: %w", claim.Token, err)
	}
	peer := ""
	if port != nil && addr != nil {
		peer = *addr + ":" + strconv.Itoa(int(*port))
	}
	if peer != v.Peer || (claim.ConnID != "" && claim.ConnID != strconv.Itoa(int(pid))) {
		return fmt.Errorf("pg_stat_activity shows the session with application_name %s as pid %d from %q; it was verified from %q (%s)", claim.Token, pid, peer, v.Peer, v.Evidence)
	}
	if d := time.Duration(age * float64(time.Second)); d > within {
		return fmt.Errorf("pg_stat_activity shows the last query of the session with application_name %s started %s ago, before the block (%s): it did not serve the block's lookups", claim.Token, d.Round(time.Millisecond), within.Round(time.Millisecond))
	}
	return nil
}
