package pgbouncer

import "github.com/dbsock/dbsock/supply"

// ConsoleRows is console, for the tests of package pgbouncer_test.
var ConsoleRows = console

// TCPBackend is the pgbouncer target's recipe with PgBouncer, started
// locally, in front of PostgreSQL's TCP address rather than its socket.
func TCPBackend() supply.Recipe {
	r := recipe
	r.Local = localBehind((*supply.Server).TCP, (*supply.Server).TCP)
	return r
}

// LyingHop is the pgbouncer target's recipe with a PgBouncer whose
// database OverTCP reaches PostgreSQL over its socket, while the tcp-tcp
// and unix-tcp paths name TCP for that leg.
func LyingHop() supply.Recipe {
	r := recipe
	r.Local = localBehind((*supply.Server).Unix, (*supply.Server).Unix)
	return r
}

// LegOf is legOf, for the tests of package pgbouncer_test.
var LegOf = legOf

// CheckHop is checkHop, for the tests of package pgbouncer_test.
var CheckHop = checkHop
