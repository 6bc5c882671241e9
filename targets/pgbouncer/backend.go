package pgbouncer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// PgBouncer's leg to the database behind it is read from PgBouncer itself,
// never assumed: its admin console's SHOW SERVERS lists each server
// connection it holds, with the addr it reached ("unix" for a Unix socket,
// or an address) and the port. The report says what that showed for the
// measuring user's database, or that the route is not stated, and why.

// backendLeg says how PgBouncer at ep reaches the database behind it for
// ep's user and database, as SHOW SERVERS shows it, in words that follow
// "in front of PostgreSQL X".
func backendLeg(ctx context.Context, ep drivers.Endpoint) string {
	rows, err := console(ctx, ep, "SHOW SERVERS")
	if err != nil {
		return "; its route there is not stated: " + err.Error()
	}
	return legOf(rows, ep.User, ep.Database)
}

// legOf words the routes the SHOW SERVERS rows of user's connections to
// database show.
func legOf(rows []map[string]string, user, database string) string {
	var socket, tcp []string // each route as SHOW SERVERS writes it
	for _, r := range rows {
		if r["user"] != user || r["database"] != database {
			continue
		}
		shown := "addr " + r["addr"] + " port " + r["port"]
		switch {
		case r["addr"] == "unix" && !slices.Contains(socket, shown):
			socket = append(socket, shown)
		case r["addr"] != "unix" && !slices.Contains(tcp, shown):
			tcp = append(tcp, shown)
		}
	}
	shown := "(SHOW SERVERS: " + strings.Join(append(socket, tcp...), "; ") + ")"
	switch {
	case len(socket) > 0 && len(tcp) > 0:
		return ", which it reaches over its Unix socket and over TCP " + shown
	case len(socket) > 0:
		return ", which it reaches over its Unix socket " + shown
	case len(tcp) > 0:
		return ", which it reaches over TCP " + shown
	}
	return fmt.Sprintf("; its route there is not stated: SHOW SERVERS lists no connection of user %s to database %s", user, database)
}
