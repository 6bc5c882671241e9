package pgbouncer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// The hop's leg, PgBouncer's to PostgreSQL, is checked from both of its
// ends where dbsock knows what it should be (Endpoint.Hop, on the
// endpoints of the PgBouncer it started): PgBouncer's SHOW SERVERS lists
// each server connection it holds for the endpoint's user and database,
// with addr "unix" on PostgreSQL's socket; PostgreSQL's inet_client_addr()
// is NULL for a session on its socket and PgBouncer's address over TCP.
// A leg that did not run as its path names fails the connection's check.

// checkHop is v with the hop's leg checked: pg is PostgreSQL's view of the
// session a query of this connection ran on (nil when dbsock cannot ask:
// another process's connection), servers SHOW SERVERS's rows.
func checkHop(v drivers.Verification, ep drivers.Endpoint, pg *drivers.Verification, servers []map[string]string) (drivers.Verification, error) {
	if ep.Hop == "" {
		return v, nil
	}
	var addrs []string
	for _, r := range servers {
		if r["user"] != ep.User || r["database"] != ep.Database {
			continue
		}
		a := r["addr"]
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
		leg := drivers.Unix // SHOW SERVERS's addr on a socket
		if a != "unix" {
			leg = drivers.ClassifyPeer(a, false)
		}
		if leg != ep.Hop {
			return v, fmt.Errorf("PgBouncer reaches PostgreSQL over %s, not %s as the %s path names (SHOW SERVERS: addr %s for database %s)", leg.Label(), ep.Hop.Label(), ep.Transport, a, ep.Database)
		}
	}
	if len(addrs) == 0 {
		return v, fmt.Errorf("SHOW SERVERS lists no connection of user %s to database %s, so the hop's leg of the %s path is not known", ep.User, ep.Database, ep.Transport)
	}
	v.Evidence += "; the hop's leg: SHOW SERVERS addr " + strings.Join(addrs, ", ")
	if pg != nil {
		if pg.Transport.Seen() != ep.Hop {
			return v, fmt.Errorf("PostgreSQL sees PgBouncer's session over %s, not %s as the %s path names (%s)", pg.Transport.Label(), ep.Hop.Label(), ep.Transport, pg.Evidence)
		}
		v.Evidence += ", PostgreSQL's " + pg.Evidence
	}
	return v, nil
}

// verifyHop checks the hop's leg of c's connection (checkHop), PostgreSQL's
// view read through c itself.
func (c *Conn) verifyHop(ctx context.Context, v drivers.Verification) (drivers.Verification, error) {
	if c.ep.Hop == "" {
		return v, nil
	}
	pg, err := c.Conn.Verify(ctx)
	if err != nil {
		return v, fmt.Errorf("read PostgreSQL's view of PgBouncer's session through %s: %w", c.ep, err)
	}
	rows, err := console(ctx, c.ep, "SHOW SERVERS")
	if err != nil {
		return v, err
	}
	return checkHop(v, c.ep, &pg, rows)
}
