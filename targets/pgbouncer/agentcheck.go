package pgbouncer

import (
	"context"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder: another process's connection
// carries its token as its application_name, which PgBouncer's SHOW
// CLIENTS lists with each client's addr ("unix" on the socket), port and
// tls. Each Find asks the admin console over admin.
func (Driver) OpenFinder(_ context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	return finder{admin: admin}, nil
}

type finder struct{ admin drivers.Endpoint }

func (finder) Expect(context.Context, string) error { return nil }

// Find reads the one client of SHOW CLIENTS whose application_name is
// claim.Token.
func (f finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	rows, err := console(ctx, f.admin, "SHOW CLIENTS")
	if err != nil {
		return drivers.Verification{}, err
	}
	var found []map[string]string
	for _, r := range rows {
		if r["application_name"] == claim.Token {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		return drivers.Verification{}, fmt.Errorf("SHOW CLIENTS lists %d clients with application_name %s; one is the protocol (the agent sets application_name to its token)", len(found), claim.Token)
	}
	v, err := clientOf(found[0], claim)
	if err != nil || f.admin.Hop == "" {
		return v, err
	}
	// The hop's leg: PostgreSQL's view of another process's session
	// cannot be read through its connection, but a connection of dbsock's
	// own to the same database through the same PgBouncer shares its pool.
	c, err := New(drivers.Workload{}).Open(ctx, f.admin)
	if err != nil {
		return v, fmt.Errorf("open dbsock's own connection through PgBouncer to check the hop's leg: %w", err)
	}
	defer c.Close()
	v, err = c.(*Conn).verifyHop(ctx, v)
	if err == nil {
		v.Evidence += " (through a connection of dbsock's own to the same database)"
	}
	return v, err
}

// clientOf is the verification of the SHOW CLIENTS row r of the agent's
// connection claim.
func clientOf(r map[string]string, claim drivers.Claim) (drivers.Verification, error) {
	if r["addr"] == "unix" {
		return drivers.Verification{Transport: drivers.ClassifyPeer("", false), Evidence: "SHOW CLIENTS: application_name " + claim.Token + ", addr unix"}, nil
	}
	peer := r["addr"] + ":" + r["port"]
	if claim.LocalAddr != "" && !drivers.SameAddr(claim.LocalAddr, peer) {
		return drivers.Verification{}, fmt.Errorf("the agent says its connection is from %s, PgBouncer sees it from %s", claim.LocalAddr, peer)
	}
	v := drivers.Verification{Transport: drivers.ClassifyPeer(r["addr"], false), Peer: r["addr"],
		Evidence: "SHOW CLIENTS: application_name " + claim.Token + ", addr " + r["addr"] + " port " + r["port"]}
	return withTLS(v, r["tls"]), nil
}

func (finder) Close() error { return nil }
