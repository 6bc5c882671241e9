package postgres

import (
	"strconv"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
)

// recipe starts PostgreSQL from Debian's versioned directory or PATH
// locally, and postgres:16 in a container (dbsock/postgres:15 without a
// registry).
var recipe = compose.Recipe{Local: localServer, Container: &compose.Container{Image: "postgres:16", Offline: "dbsock/postgres:15", UID: 999, Spec: container}}

// SocketDirs are the server's socket directories in a container: the
// image's default first, where its entrypoint's set-up (a temporary server
// reached by psql with PGHOST emptied) looks for it, then /sock, the
// directory bind-mounted from the host.
const SocketDirs = "/var/run/postgresql,/sock"

// container runs the official postgres image (and dbsock/postgres).
func container(port int, _, bind string) (compose.ContainerSpec, error) {
	pw, err := compose.RandomPassword()
	if err != nil {
		return compose.ContainerSpec{}, err
	}
	p := strconv.Itoa(port)
	return compose.ContainerSpec{
		Cmd: []string{server, "-c", "listen_addresses=" + bind, "-c", "port=" + p, "-c", "unix_socket_directories=" + SocketDirs,
			"-c", "unix_socket_permissions=0777", "-c", "max_connections=300"},
		Env:    map[string]string{"POSTGRES_USER": User, "POSTGRES_PASSWORD": pw, "POSTGRES_DB": Database},
		Socket: ".s.PGSQL." + p, User: User, Password: pw, Database: Database,
		Ready: compose.LoginReady(New(drivers.Workload{})),
	}, nil
}
