package pgbouncer

import "github.com/dbsock/dbsock/supply"

// ConsoleRows is console, for the tests of package pgbouncer_test.
var ConsoleRows = console

// TCPBackend is the pgbouncer target's recipe with PgBouncer, started
// locally, in front of PostgreSQL's TCP address rather than its socket.
func TCPBackend() supply.Recipe {
	r := recipe
	r.Local = localBehind((*supply.Server).TCP)
	return r
}

// LegOf is legOf, for the tests of package pgbouncer_test.
var LegOf = legOf
