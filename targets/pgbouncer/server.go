package pgbouncer

import (
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/postgres"
)

// description is PgBouncer's server in a container: dbsock/pgbouncer's
// entrypoint initialises PostgreSQL (listening on its own socket only),
// then runs PgBouncer on its port and /sock. The password reaches it in
// the file PGBOUNCER_PASSWORD_FILE names, never in its environment. With
// the run's certificate PgBouncer serves TLS to the clients that ask.
// Locally localServer starts both (local.go). compose.yaml's pgbouncer
// service comes from it too.
var description = supply.Description{
	Name:      name,
	Binary:    server,
	Instances: []supply.Instance{{Name: server, Args: containerArgs}},
	Socket:    func(port string) string { return ".s.PGSQL." + port },
	Port:      16432,
	User:      User,
	Database:  Database,
	Secrets:   []string{"pgbouncer-password"},
	Env: func(a supply.At) map[string]string {
		return map[string]string{"PGBOUNCER_USER": User, "PGBOUNCER_PASSWORD_FILE": a.Secret("pgbouncer-password"), "PGBOUNCER_DB": Database}
	},
	TLS:   supply.TLSOnPort,
	Ready: supply.LoginReady(New(drivers.Workload{})),
	Note: "PgBouncer (transaction pooling) in front of PostgreSQL, both in one\n" +
		"container: PostgreSQL listens on its own socket only, PgBouncer on\n" +
		"127.0.0.1 and /sock. There is no official image: make images builds it.",
	// There is no official image of PgBouncer: make images builds this one
	// from Debian's packages.
	Container: supply.Container{Image: "dbsock/pgbouncer:1.18", Offline: "dbsock/pgbouncer:1.18", Hops: containerHops},
	Local:     localServer,
}

// recipe starts PostgreSQL and PgBouncer locally, or both in one container
// of dbsock/pgbouncer:1.18.
var recipe = description.Recipe()

// User is the account dbsock uses through PgBouncer, and the admin user of
// its console; Database the database behind it.
const (
	User     = "dbsock"
	Database = postgres.Database
	// OverTCP is the name under which the PgBouncer dbsock starts serves
	// Database over PostgreSQL's 127.0.0.1 TCP listener (its other
	// databases: over PostgreSQL's socket): the hop's leg of the tcp-tcp
	// and unix-tcp paths.
	OverTCP = Database + "_over_tcp"
)

// containerArgs are dbsock/pgbouncer's arguments at a. Started by the
// docker provider, PostgreSQL listens on 127.0.0.1 too (the container's,
// or on the host's network the host's, at a free port), for database
// OverTCP (containerHops); compose.yaml's service listens so too (at
// DBSOCK_PGBOUNCER_BACKEND_PORT), though dbsock measures the hop's legs
// through the docker provider only. (Without a free port, which 127.0.0.1 always has, the
// hop's TCP paths fail with PgBouncer's "no such database".)
func containerArgs(a supply.At) []string {
	args := []string{"--listen", a.Bind(","), "--port", a.Port, "--socket-dir", a.Dir}
	switch {
	case a.Local():
	case strings.HasPrefix(a.Bind(","), "$"): // compose.yaml's service: a variable, on the host's network
		args = append(args, "--backend-tcp", "${DBSOCK_PGBOUNCER_BACKEND_PORT:-16433}")
	default:
		if port, err := supply.FreePort4(); err == nil {
			args = append(args, "--backend-tcp", strconv.Itoa(port))
		}
	}
	if a.TLSPort != "" {
		args = append(args, "--tls-cert", a.TLS.Cert, "--tls-key", a.TLS.Key)
	}
	return args
}

// containerHops names the hop's legs of the docker provider's container's
// endpoints: its PgBouncer reaches PostgreSQL over PostgreSQL's socket in
// the container, and for database OverTCP over 127.0.0.1 (the tcp-tcp and
// unix-tcp paths).
func containerHops(srv *supply.Server) {
	tcp, unix := srv.TCP(), srv.Unix()
	tcp.Hop, unix.Hop = drivers.Unix, drivers.Unix
	srv.Set(tcp, unix, hopOverTCP(tcp, drivers.TCPHopTCP), hopOverTCP(unix, drivers.UnixHopTCP))
}
