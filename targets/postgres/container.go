package postgres

import (
	"strconv"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// recipe starts PostgreSQL from Debian's versioned directory or PATH
// locally, and postgres:16 in a container (dbsock/postgres:15 without a
// registry).
var recipe = supply.Recipe{Local: localServer, Container: &supply.Container{Image: "postgres:16", Offline: "dbsock/postgres:15", UID: 999, Spec: container, Rotate: rotate}}

// SocketDirs are the server's socket directories in a container: the
// image's default first, where its entrypoint's set-up (a temporary server
// reached by psql with PGHOST emptied) looks for it, then /sock, the
// directory bind-mounted from the host.
const SocketDirs = "/var/run/postgresql,/sock"

// InitdbArgs make every TCP login to a container's server give its
// password (scram-sha-256): initdb's default, kept by the images, trusts
// 127.0.0.1 and ::1, which under host networking are this host's.
const InitdbArgs = "--auth-host=scram-sha-256"

// privateKey is where the server's TLS key is copied in its container,
// owned by the postgres user with mode 0600 (its home, in the official
// image and dbsock/postgres alike).
const privateKey = "/var/lib/postgresql/tls-key.pem"

// container runs the official postgres image (and dbsock/postgres); the
// password reaches it in a file in the socket dir that the image's
// POSTGRES_PASSWORD_FILE names, never in its environment: a bootstrap
// password, which rotate changes to the run's (pw) once the server is up,
// since the official image leaves the one it read in the server's
// environment.
// With the run's TLS files it also serves TLS on its one port.
func container(sf supply.SpecFor) (supply.ContainerSpec, error) {
	pw, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	boot, err := supply.RandomPassword()
	if err != nil {
		return supply.ContainerSpec{}, err
	}
	p := strconv.Itoa(sf.Port)
	spec := supply.ContainerSpec{
		Cmd: []string{server, "-c", "listen_addresses=" + sf.Bind, "-c", "port=" + p, "-c", "unix_socket_directories=" + SocketDirs,
			"-c", "unix_socket_permissions=0777", "-c", "max_connections=300"},
		// initdb's default trusts loopback TCP, which with host networking
		// is this host's: every TCP login must give the password (the
		// socket stays trusted, inside the run's private directory).
		Env: map[string]string{"POSTGRES_USER": User, "POSTGRES_PASSWORD_FILE": "/sock/postgres-password", "POSTGRES_DB": Database,
			"POSTGRES_INITDB_ARGS": InitdbArgs},
		Secrets: map[string]string{secretPassword: boot},
		Socket:  ".s.PGSQL." + p, User: User, Password: pw, Database: Database,
		Ready: supply.LoginReady(New(drivers.Workload{})),
	}
	if sf.TLS.Cert != "" {
		// PostgreSQL refuses a key others may read: the container's root
		// copies it, private to the postgres user, before the entrypoint.
		tf := sf.TLS
		tf.Key = privateKey
		spec.Cmd = supply.PrivateKeyCmd(sf.TLS, "postgres", privateKey, append(spec.Cmd, TLSArgs(tf)...))
		spec.TLSPort = sf.Port
	}
	return spec, nil
}
