package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// User is the role dbsock uses, and Database (postgres.go) the database,
// in the PostgreSQL servers it starts.
const (
	User = "dbsock"
)

// postgresBin finds a PostgreSQL server binary: on PATH, else in Debian's
// versioned /usr/lib/postgresql/N/bin or Homebrew's postgresql@N kegs
// (newest first).
func postgresBin(l *supply.Local, name string) string {
	_, p := l.FindIn(append([]string{"/usr/lib/postgresql/*/bin"}, supply.HomebrewKegs("postgresql")...), name)
	return p
}

func localServer(ctx context.Context, l *supply.Local, name string) (*supply.Server, error) {
	initdb, serverBin := postgresBin(l, "initdb"), postgresBin(l, server)
	if initdb == "" || serverBin == "" {
		return nil, fmt.Errorf("%w %s: local provider: PostgreSQL's initdb and postgres were not found on PATH (%s), in /usr/lib/postgresql/*/bin or in Homebrew's postgresql kegs (apt-get install postgresql, or brew install postgresql@16, or run scripts/install-deps.sh)", supply.ErrCannotSupply, name, supply.SearchPath())
	}
	ls, err := l.Prepare(name, "")
	if err != nil {
		return nil, err
	}
	ls.Sock = SocketFile(ls.Dir, ls.Port)
	if len(ls.Sock) > drivers.MaxSocketPath {
		return nil, ls.Fail(fmt.Errorf("socket path %s is longer than %d bytes; set TMPDIR to a shorter directory", ls.Sock, drivers.MaxSocketPath))
	}
	// SIGINT is PostgreSQL's fast shutdown: its SIGTERM waits for every
	// session to end, which a hung or half-connected client may never do.
	ls.StopSignal = syscall.SIGINT
	// PostgreSQL will not run as root: then it runs as the postgres user,
	// which gets its own server dir, and the run dir lets it pass (0711:
	// enter, not list).
	if os.Geteuid() == 0 {
		cred, err := supply.SystemUser(OSUser, "PostgreSQL")
		if err != nil {
			return nil, ls.Fail(err)
		}
		ls.RunAs = cred
		if err := os.Chown(ls.Dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, ls.Fail(err)
		}
		if err := os.Chmod(filepath.Dir(ls.Dir), 0o711); err != nil {
			return nil, ls.Fail(err)
		}
	}
	password, err := supply.RandomPassword()
	if err != nil {
		return nil, ls.Fail(err)
	}
	pwfile := filepath.Join(ls.Dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return nil, ls.Fail(err)
	}
	if ls.RunAs != nil {
		if err := os.Chown(pwfile, int(ls.RunAs.Uid), int(ls.RunAs.Gid)); err != nil {
			return nil, ls.Fail(err)
		}
	}
	data := filepath.Join(ls.Dir, "data")
	cmd := exec.CommandContext(ctx, initdb, "-D", data, "-U", User, "--pwfile="+pwfile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.Dir = ls.Dir
	cmd.Env = supply.ServerEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: ls.RunAs}
	out, err := cmd.CombinedOutput()
	os.Remove(pwfile)
	if err != nil && ctx.Err() != nil {
		return nil, ls.Fail(fmt.Errorf("interrupted while initdb initialised the data dir: %w", ctx.Err()))
	}
	if err != nil {
		return nil, ls.Fail(fmt.Errorf("initialize PostgreSQL data dir %s with %s: %w%s\n%s", data, initdb, err, supply.ClosedTo(err, ls.Dir, ls.RunAs), supply.Tail(string(out), 8)))
	}
	tf, err := ls.ServeTLS(0) // TLS on its one port, for clients that ask (SSLRequest)
	if err != nil {
		return nil, ls.Fail(err)
	}
	args := []string{"-D", data, "-c", "listen_addresses=" + ls.Bind(","), "-c", "port=" + strconv.Itoa(ls.Port),
		"-c", "unix_socket_directories=" + ls.Dir, "-c", "unix_socket_permissions=0700", "-c", "max_connections=300",
		"-c", "shared_buffers=32MB", "-c", "fsync=off"}
	args = append(args, TLSArgs(tf)...)
	tcp := drivers.Endpoint{Transport: drivers.TCP, Address: ls.TCPAddr(), User: User, Password: password, Database: Database}
	unix := tcp
	unix.Transport, unix.Address = drivers.Unix, ls.Sock
	if err := ls.StartProbe(ctx, server, serverBin, args, nil, "", loginProbe(tcp, unix)); err != nil {
		return nil, ls.Fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", serverBin, ls.PID())
	return ls.Server(name, origin, tcp, unix), nil
}

// loginProbe is the local server's readiness: accepting connections is not
// yet ready, as PostgreSQL refuses logins while it starts up ("the
// database system is starting up"); it logs in over both endpoints, at the
// first start and after every restart (--instances) alike.
func loginProbe(eps ...drivers.Endpoint) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, ep := range eps {
			if _, err := New(drivers.Workload{}).Info(ctx, ep); err != nil {
				return err
			}
		}
		return nil
	}
}

// TLSArgs are the server settings that turn TLS on with the run's
// certificate: a client that asks for it gets it, on the server's one
// port; one that does not stays plain.
func TLSArgs(tf supply.TLSFiles) []string {
	return []string{"-c", "ssl=on", "-c", "ssl_cert_file=" + tf.Cert, "-c", "ssl_key_file=" + tf.Key,
		"-c", "ssl_min_protocol_version=TLSv1.2"}
}
