package pgbouncer

import (
	"strconv"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/postgres"
)

// recipe starts PostgreSQL and PgBouncer locally, or both in one container
// of dbsock/pgbouncer:1.18 (there is no official image of PgBouncer; make
// images builds this one from Debian's packages).
var recipe = supply.Recipe{Local: localServer, Container: &supply.Container{Image: "dbsock/pgbouncer:1.18", Offline: "dbsock/pgbouncer:1.18",
	Spec: container}}

// User is the account dbsock uses through PgBouncer, and the admin user of
// its console; Database the database behind it.
const (
	User     = "dbsock"
	Database = postgres.Database
)

// container runs dbsock/pgbouncer's entrypoint: it initialises PostgreSQL
// (listening on its own socket only), then runs PgBouncer on port and
// /sock. The password reaches it in a file in the socket dir that
// PGBOUNCER_PASSWORD_FILE names, never in its environment.
// With the run's TLS files PgBouncer serves TLS to the clients that ask.
func container(sf supply.SpecFor) (supply.ContainerSpec, error) {
	pw, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	p := strconv.Itoa(sf.Port)
	cmd, tlsPort := []string{server, "--listen", sf.Bind, "--port", p, "--socket-dir", "/sock"}, 0
	if sf.TLS.Cert != "" {
		cmd, tlsPort = append(cmd, "--tls-cert", sf.TLS.Cert, "--tls-key", sf.TLS.Key), sf.Port
	}
	return supply.ContainerSpec{
		TLSPort: tlsPort,
		Cmd:     cmd,
		Env:     map[string]string{"PGBOUNCER_USER": User, "PGBOUNCER_PASSWORD_FILE": "/sock/pgbouncer-password", "PGBOUNCER_DB": Database},
		Secrets: map[string]string{"pgbouncer-password": pw},
		Socket:  ".s.PGSQL." + p, User: User, Password: pw, Database: Database,
		Ready: supply.LoginReady(New(drivers.Workload{})),
	}, nil
}
