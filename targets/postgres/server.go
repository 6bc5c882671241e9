package postgres

import (
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// description is PostgreSQL's server, whichever provider starts it.
// Locally: from Debian's versioned directory or PATH, its data directory
// made by initdb with the run's account (local.go), run as the postgres
// user when dbsock is root, ready once a login works over both endpoints.
// In a container: the official postgres image (and dbsock/postgres); the
// password reaches it in the file its POSTGRES_PASSWORD_FILE names, never
// in its environment: a bootstrap password, which rotate changes to the
// run's once the server is up, since the official image leaves the one it
// read in the server's environment. With the run's certificate it serves
// TLS on its one port. compose.yaml's postgres service comes from it too.
var description = supply.Description{
	Name:      name,
	Binary:    server,
	Find:      findLocal,
	Prepare:   initdb,
	Instances: []supply.Instance{{Name: server, Args: args}},
	Socket:    func(port string) string { return ".s.PGSQL." + port },
	Port:      15432,
	User:      User,
	Database:  Database,
	Secrets:   []string{secretPassword},
	// initdb's default trusts loopback TCP, which with host networking is
	// this host's: every TCP login must give the password (the socket
	// stays trusted, inside the run's private directory).
	Env: func(a supply.At) map[string]string {
		return map[string]string{"POSTGRES_USER": User, "POSTGRES_PASSWORD_FILE": a.Secret(secretPassword), "POSTGRES_DB": Database,
			"POSTGRES_INITDB_ARGS": InitdbArgs}
	},
	TLS: supply.TLSOnPort,
	// PostgreSQL refuses a key others may read: the container's root
	// copies it, private to the postgres user, before the entrypoint.
	KeyOwner: "postgres", KeyCopy: privateKey,
	Ready:      supply.LoginReady(New(drivers.Workload{})),
	LocalReady: loginProbe,
	OSUser:     OSUser,
	// SIGINT is PostgreSQL's fast shutdown: its SIGTERM waits for every
	// session to end, which a hung or half-connected client may never do.
	StopSignal: syscall.SIGINT,
	Note: "The image's default socket directory comes first: its set-up reaches\n" +
		"a temporary server there (psql with PGHOST emptied).",
	Container: supply.Container{Image: "postgres:16", Offline: "dbsock/postgres:15", UID: 999, Rotate: rotate},
}

// recipe starts PostgreSQL from Debian's versioned directory or PATH
// locally, and postgres:16 in a container (dbsock/postgres:15 without a
// registry).
var recipe = description.Recipe()

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

// args are the server's settings at a: locally its data directory and
// socket directory, and no fsync (a throwaway server); in a container the
// image's data directory, and its default socket directory besides /sock.
func args(a supply.At) []string {
	var args []string
	dirs := SocketDirs
	if a.Local() {
		args, dirs = []string{"-D", dataDir(a.Dir)}, a.Dir
	}
	args = append(args, "-c", "listen_addresses="+a.Bind(","), "-c", "port="+a.Port, "-c", "unix_socket_directories="+dirs,
		"-c", "unix_socket_permissions="+a.SocketMode, "-c", "max_connections=300")
	if a.Local() {
		args = append(args, "-c", "shared_buffers=32MB", "-c", "fsync=off")
	}
	if a.TLSPort != "" {
		args = append(args, TLSArgs(a.TLS)...)
	}
	return args
}
