package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/postgres"
)

// localServer starts a private PostgreSQL (the postgres target's recipe)
// and PgBouncer in front of it, in transaction pooling, reaching it over
// PostgreSQL's Unix socket; the client reaches PgBouncer over 127.0.0.1
// TCP or PgBouncer's own socket.
var localServer = localBehind((*supply.Server).Unix)

// localBehind is a local recipe of PostgreSQL and PgBouncer in front of
// it, which reaches it at the endpoint of PostgreSQL's that leg picks (its
// Unix socket, or, in a test, its TCP address).
func localBehind(leg func(*supply.Server) drivers.Endpoint) func(context.Context, *supply.Local, string) (*supply.Server, error) {
	return func(ctx context.Context, l *supply.Local, target string) (*supply.Server, error) {
		return startLocal(ctx, l, target, leg)
	}
}

// startLocal starts PostgreSQL, and PgBouncer in front of it at leg.
func startLocal(ctx context.Context, l *supply.Local, target string, leg func(*supply.Server) drivers.Endpoint) (*supply.Server, error) {
	_, bin := l.Find(server)
	if bin == "" {
		return nil, supply.NotFound(target, server, "apt-get install "+server+", or run scripts/install-deps.sh")
	}
	pg, err := postgres.StartLocal(ctx, l, target+"-postgres")
	if err != nil {
		return nil, err
	}
	ls, err := l.Prepare(target, "")
	if err != nil {
		return nil, errors.Join(err, pg.Stop(context.Background()))
	}
	fail := func(err error) error { return errors.Join(ls.Fail(err), pg.Stop(context.Background())) }
	ls.Sock = postgres.SocketFile(ls.Dir, ls.Port)
	if err := ls.CheckSocket(); err != nil {
		return nil, fail(err)
	}
	// PgBouncer will not run as root either: as root it runs as the user
	// PostgreSQL runs as, in a directory of its own.
	if os.Geteuid() == 0 {
		if ls.RunAs, err = supply.SystemUser(osUser, "PgBouncer"); err != nil {
			return nil, fail(err)
		}
	}
	tf, err := ls.ServeTLS(0) // TLS between client and PgBouncer, on its one port
	if err != nil {
		return nil, fail(err)
	}
	ini, err := writeConfig(ls, leg(pg), listen{addr: ls.Bind(","), port: ls.Port, socketDir: ls.Dir, socketMode: "0700", tls: tf})
	if err != nil {
		return nil, fail(err)
	}
	// PgBouncer reads its auth file as it starts (and on a reload, which
	// dbsock never asks for): it is on disk only then.
	if err := ls.HandOver(filepath.Join(ls.Dir, "userlist.txt")); err != nil {
		return nil, fail(err)
	}
	if err := ls.Start(ctx, server, bin, []string{ini}, nil, ""); err != nil {
		return nil, fail(err)
	}
	tcp, unix := supply.Served(pg.TCP(), ls.TCPAddr(), ls.Sock)
	srv := ls.Server(target, ls.Origin(bin)+fmt.Sprintf(" in front of %s", pg.Origin), tcp, unix).Join(pg)
	srv.Serving = serving + " (both started by dbsock, pinned alike)"
	return srv, nil
}

// listen is where PgBouncer listens.
type listen struct {
	addr       string
	port       int
	socketDir  string
	socketMode string
	tls        supply.TLSFiles // TLS for clients that ask ("" files: none)
}

// writeConfig writes pgbouncer.ini and its auth file into ls.Dir, owned by
// the user PgBouncer runs as, for the database behind it at backend (a
// Unix socket path DIR/.s.PGSQL.PORT, or a TCP HOST:PORT), and returns the
// ini's path. The password is in the auth file only, never on a command
// line.
func writeConfig(ls *supply.LocalServer, backend drivers.Endpoint, b listen) (string, error) {
	host, port, err := net.SplitHostPort(backend.Address)
	if backend.Transport.Network() == "unix" {
		var dir string
		var ok bool
		host, err = filepath.Dir(backend.Address), nil
		if dir, port, ok = strings.Cut(filepath.Base(backend.Address), ".s.PGSQL."); !ok || dir != "" {
			err = fmt.Errorf("the backend socket %s is not DIR/.s.PGSQL.PORT", backend.Address)
		}
	}
	if err != nil {
		return "", fmt.Errorf("pgbouncer: the database behind it at %s: %w", backend.Address, err)
	}
	files := map[string]string{
		"userlist.txt":  fmt.Sprintf("%q %q\n", backend.User, backend.Password),
		"pgbouncer.ini": config(host, port, backend.User, filepath.Join(ls.Dir, "userlist.txt"), b),
	}
	for name, content := range files {
		p := filepath.Join(ls.Dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return "", fmt.Errorf("pgbouncer: write %s: %w", p, err)
		}
		if ls.RunAs != nil {
			if err := os.Chown(p, int(ls.RunAs.Uid), int(ls.RunAs.Gid)); err != nil {
				return "", err
			}
		}
	}
	if ls.RunAs != nil {
		if err := os.Chown(ls.Dir, int(ls.RunAs.Uid), int(ls.RunAs.Gid)); err != nil {
			return "", err
		}
	}
	return filepath.Join(ls.Dir, "pgbouncer.ini"), nil
}

// config is pgbouncer.ini: every database goes to the backend (its socket's
// directory, or a TCP address, and port),
// transaction pooling, SCRAM with the passwords of the auth file, and the
// measuring user may read the admin console (SHOW CLIENTS). A login to
// PostgreSQL that failed (it was still starting, as after a restart) is
// tried again after 0.2 s, not PgBouncer's default of 15 s, in which every
// client would be refused.
func config(backendHost, backendPort, user, authFile string, b listen) string {
	return strings.Join([]string{
		"[databases]",
		"* = host=" + backendHost + " port=" + backendPort,
		"[pgbouncer]",
		"listen_addr = " + b.addr,
		"listen_port = " + strconv.Itoa(b.port),
		"unix_socket_dir = " + b.socketDir,
		"unix_socket_mode = " + b.socketMode,
		"auth_type = scram-sha-256",
		"auth_file = " + authFile,
		"admin_users = " + user,
		"pool_mode = transaction",
		"max_client_conn = 2000",
		"default_pool_size = 20",
		"ignore_startup_parameters = extra_float_digits",
		"server_login_retry = 0.2",
		"",
	}, "\n") + tlsConfig(b.tls)
}

// tlsConfig turns TLS on between clients and PgBouncer with the run's
// certificate, for the clients that ask ("allow": a plain one stays
// plain); PgBouncer to PostgreSQL stays on the socket.
func tlsConfig(tf supply.TLSFiles) string {
	if tf.Cert == "" {
		return ""
	}
	return strings.Join([]string{
		"client_tls_sslmode = allow",
		"client_tls_cert_file = " + tf.Cert,
		"client_tls_key_file = " + tf.Key,
		"client_tls_ca_file = " + tf.CA,
		"client_tls_protocols = secure",
		"",
	}, "\n")
}
