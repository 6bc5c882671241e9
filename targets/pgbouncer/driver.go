// Package pgbouncer is dbsock's pgbouncer target: the postgres target's
// lookup, through PgBouncer in transaction pooling in front of a
// PostgreSQL (which the PgBouncer dbsock starts reaches over PostgreSQL's
// own Unix socket; the report says what PgBouncer's SHOW SERVERS shows).
// The client reaches PgBouncer over 127.0.0.1 TCP or PgBouncer's socket,
// the most common real use of a PostgreSQL socket: a pooler beside the
// application. Each connection's transport is verified in PgBouncer's
// admin console (SHOW CLIENTS), since PostgreSQL sees only PgBouncer.
package pgbouncer

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets/postgres"
)

// Driver is the postgres target's driver in exec mode (PgBouncer 1.18 in
// transaction pooling cannot keep a named statement for a client), with
// PgBouncer's own answers for Info and Verify.
type Driver struct{ *postgres.Driver }

// New returns the pgbouncer driver for workload w.
func New(w drivers.Workload) Driver {
	d := postgres.NewMode(postgres.ModeExec, w)
	d.Pooled = true
	return Driver{d}
}

// Name implements drivers.Driver.
func (Driver) Name() string { return name }

// Pipeline implements drivers.Pipeliner.
func (d Driver) Pipeline(depth int) drivers.Driver {
	return Driver{d.Driver.Pipeline(depth).(*postgres.Driver)}
}

// Describe implements drivers.Driver.
func (d Driver) Describe() string {
	return d.Driver.Describe() + ", through PgBouncer (transaction pooling)"
}

// Info implements drivers.Driver: PgBouncer's version from its console,
// and the PostgreSQL behind it, with the route PgBouncer reaches it by as
// its console shows it (backendLeg), after a query through PgBouncer made
// sure it holds a connection there.
func (d Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	backend, err := d.Driver.Info(ctx, ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	rows, err := console(ctx, ep, "SHOW VERSION")
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	if len(rows) == 0 {
		return drivers.ServerInfo{}, fmt.Errorf("pgbouncer over %s: SHOW VERSION returned nothing", ep)
	}
	var v string
	for _, val := range rows[0] {
		v = val
	}
	product, version, _ := strings.Cut(strings.TrimSpace(v), " ")
	if !strings.EqualFold(product, "PgBouncer") {
		return drivers.ServerInfo{}, fmt.Errorf("pgbouncer over %s: the console says it is %q, not PgBouncer", ep, v)
	}
	return drivers.ServerInfo{Product: "PgBouncer", Version: version,
		Detail: "transaction pooling in front of " + backend.String() + backendLeg(ctx, ep)}, nil
}

// console runs one command on PgBouncer's admin console over ep (the same
// transport and account, database Console, simple protocol as the console
// requires) and returns its rows by column name.
func console(ctx context.Context, ep drivers.Endpoint, cmd string) ([]map[string]string, error) {
	ep.Database = Console
	cfg, err := postgres.Config(ep)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PgBouncer's console over %s (the user must be in admin_users or stats_users): %w", ep, err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer console over %s: %s: %w", ep, cmd, err)
	}
	defer rows.Close()
	var out []map[string]string
	fields := rows.FieldDescriptions()
	for rows.Next() {
		raw := rows.RawValues()
		row := map[string]string{}
		for i, f := range fields {
			row[f.Name] = string(raw[i])
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// Open implements drivers.Driver.
func (d Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	return d.OpenNamed(ctx, ep, "")
}

// OpenNamed implements drivers.NamedOpener: the client's application_name
// is token, which SHOW CLIENTS lists it by.
func (d Driver) OpenNamed(ctx context.Context, ep drivers.Endpoint, token string) (drivers.Conn, error) {
	c, err := d.Driver.OpenNamed(ctx, ep, token)
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c.(*postgres.Conn), ep: ep}, nil
}

// Conn is one client connection to PgBouncer.
type Conn struct {
	*postgres.Conn
	ep drivers.Endpoint
}

// Verify implements drivers.Conn: PgBouncer's SHOW CLIENTS lists this
// connection by its port over TCP; a Unix client as addr "unix" with this
// process's pid. The hop's leg is checked too where the endpoint names it
// (verifyHop).
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	rows, err := console(ctx, c.ep, "SHOW CLIENTS")
	if err != nil {
		return drivers.Verification{}, err
	}
	v, err := FindClient(rows, c.LocalAddr(), c.ApplicationName())
	v.Negotiated.Auth = c.Auth()
	if err != nil {
		return v, err
	}
	return c.verifyHop(ctx, v)
}

// withTLS is v on the tls path when PgBouncer's tls column for the client
// says it is encrypted ("TLSv1.3/TLS_AES_256_GCM_SHA384/ECDH=X25519"; empty
// for a plain client).
func withTLS(v drivers.Verification, tls string) drivers.Verification {
	if tls == "" {
		v.Evidence += ", tls empty"
		return v
	}
	v.Evidence += ", tls " + tls
	v.Transport = v.Transport.Secured()
	parts := strings.Split(tls, "/")
	v.Negotiated.TLSVersion = strings.Replace(parts[0], "TLSv", "TLS ", 1)
	if len(parts) > 1 {
		v.Negotiated.TLSCipher = parts[1]
	}
	return v
}

// FindClient finds this connection in SHOW CLIENTS rows: over TCP the row
// with its local address and port; over a Unix socket the row with addr
// "unix" and its own application_name app (unique to it).
func FindClient(rows []map[string]string, local net.Addr, app string) (drivers.Verification, error) {
	if a, ok := local.(*net.TCPAddr); ok {
		for _, r := range rows {
			if r["port"] == strconv.Itoa(a.Port) && r["addr"] == a.IP.String() {
				return withTLS(drivers.Verification{Transport: drivers.ClassifyPeer(r["addr"], false), Evidence: "SHOW CLIENTS: addr " + r["addr"] + " port " + r["port"], Peer: r["addr"]}, r["tls"]), nil
			}
		}
		// Through a proxy (a published port) PgBouncer sees the proxy's
		// address: this connection is then the row of its own
		// application_name.
		for _, r := range rows {
			if r["application_name"] == app && app != "" && drivers.Routed(r["addr"]) {
				v := drivers.Verification{Transport: drivers.ClassifyPeer(r["addr"], false), Peer: r["addr"],
					Evidence: "SHOW CLIENTS: application_name " + app + ", addr " + r["addr"] + " port " + r["port"] + " (not this client's " + local.String() + ": a proxy's)"}
				return withTLS(v, r["tls"]), nil
			}
		}
		return drivers.Verification{}, fmt.Errorf("SHOW CLIENTS lists no client at %s, nor one named %s", local, app)
	}
	for _, r := range rows {
		if r["application_name"] == app && app != "" {
			if r["addr"] == "unix" {
				return drivers.Verification{Transport: drivers.ClassifyPeer("", false), Evidence: "SHOW CLIENTS: application_name " + app + ", addr unix"}, nil
			}
			return drivers.Verification{Transport: drivers.ClassifyPeer(r["addr"], false), Evidence: "SHOW CLIENTS: application_name " + app + ", addr " + r["addr"] + " port " + r["port"]}, nil
		}
	}
	return drivers.Verification{}, fmt.Errorf("SHOW CLIENTS lists no client named %s (this connection's application_name): is this PgBouncer 1.18 or later?", app)
}
