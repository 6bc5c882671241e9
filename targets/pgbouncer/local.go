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
// PostgreSQL's Unix socket, and for database OverTCP over its 127.0.0.1
// TCP listener; the client reaches PgBouncer over 127.0.0.1 TCP or
// PgBouncer's own socket.
var localServer = localBehind((*supply.Server).Unix, (*supply.Server).TCP)

// legs pick the endpoints of PostgreSQL's PgBouncer reaches it at: for
// its databases, and for OverTCP (in a test, others than the paths name).
type legs struct {
	all, overTCP func(*supply.Server) drivers.Endpoint
}

// localBehind is a local recipe of PostgreSQL and PgBouncer in front of
// it, which reaches it at the endpoint of PostgreSQL's that all picks (its
// Unix socket, or, in a test, its TCP address), and for database OverTCP
// at the one overTCP picks (its TCP address but in a test).
func localBehind(all, overTCP func(*supply.Server) drivers.Endpoint) func(context.Context, *supply.Local, string) (*supply.Server, error) {
	return func(ctx context.Context, l *supply.Local, target string) (*supply.Server, error) {
		return startLocal(ctx, l, target, legs{all, overTCP})
	}
}

// startLocal starts PostgreSQL, and PgBouncer in front of it at leg.
func startLocal(ctx context.Context, l *supply.Local, target string, leg legs) (*supply.Server, error) {
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
	ini, err := writeConfig(ls, leg.all(pg), leg.overTCP(pg), listen{addr: ls.Bind(","), port: ls.Port, socketDir: ls.Dir, socketMode: "0700", tls: tf})
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
	tcp.Hop, unix.Hop = leg.all(pg).Transport, leg.all(pg).Transport
	srv := ls.Server(target, ls.Origin(bin)+fmt.Sprintf(" in front of %s", pg.Origin), tcp, unix)
	own := srv.CPU // PgBouncer's process tree alone
	if srv = srv.Join(pg); srv.CPU != nil {
		srv.HopCPU = own
	}
	srv.Set(hopOverTCP(tcp, drivers.TCPHopTCP), hopOverTCP(unix, drivers.UnixHopTCP))
	srv.Serving = serving + " (both started by dbsock, pinned alike)"
	return srv, nil
}

// hopOverTCP is ep on path, whose database is OverTCP: the same database
// behind PgBouncer, reached over PostgreSQL's 127.0.0.1 TCP listener.
func hopOverTCP(ep drivers.Endpoint, path drivers.Transport) drivers.Endpoint {
	ep.Transport, ep.Database, ep.Hop = path, OverTCP, drivers.TCP
	return ep
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
// Unix socket path DIR/.s.PGSQL.PORT, or a TCP HOST:PORT), database
// OverTCP at overTCP, and returns the ini's path. The password is in the
// auth file only, never on a command line.
func writeConfig(ls *supply.LocalServer, backend, overTCP drivers.Endpoint, b listen) (string, error) {
	over, err := database(OverTCP, overTCP, " dbname="+overTCP.Database)
	if err != nil {
		return "", err
	}
	all, err := database("*", backend, "")
	if err != nil {
		return "", err
	}
	files := map[string]string{
		"userlist.txt":  fmt.Sprintf("%q %q\n", backend.User, backend.Password),
		"pgbouncer.ini": config([]string{over, all}, backend.User, filepath.Join(ls.Dir, "userlist.txt"), b),
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

// database is a line of pgbouncer.ini's [databases]: name to the database
// at ep (its socket's directory and port, or its TCP host and port), then
// more.
func database(name string, ep drivers.Endpoint, more string) (string, error) {
	host, port, err := net.SplitHostPort(ep.Address)
	if ep.Transport.Network() == "unix" {
		var dir string
		var ok bool
		host, err = filepath.Dir(ep.Address), nil
		if dir, port, ok = strings.Cut(filepath.Base(ep.Address), ".s.PGSQL."); !ok || dir != "" {
			err = fmt.Errorf("the backend socket %s is not DIR/.s.PGSQL.PORT", ep.Address)
		}
	}
	if err != nil {
		return "", fmt.Errorf("pgbouncer: the database behind it at %s: %w", ep.Address, err)
	}
	return name + " = host=" + host + " port=" + port + more, nil
}

// config is pgbouncer.ini: its databases (each a line of [databases]:
// OverTCP to PostgreSQL's TCP listener, every other one to the backend),
// transaction pooling, SCRAM with the passwords of the auth file, and the
// measuring user may read the admin console (SHOW CLIENTS). A login to
// PostgreSQL that failed (it was still starting, as after a restart) is
// tried again after 0.2 s, not PgBouncer's default of 15 s, in which every
// client would be refused.
func config(databases []string, user, authFile string, b listen) string {
	return strings.Join(append(append([]string{"[databases]"}, databases...),
		"[pgbouncer]",
		"listen_addr = "+b.addr,
		"listen_port = "+strconv.Itoa(b.port),
		"unix_socket_dir = "+b.socketDir,
		"unix_socket_mode = "+b.socketMode,
		"auth_type = scram-sha-256",
		"auth_file = "+authFile,
		"admin_users = "+user,
		"pool_mode = transaction",
		"max_client_conn = 2000",
		"default_pool_size = 20",
		"ignore_startup_parameters = extra_float_digits",
		"server_login_retry = 0.2",
		"",
	), "\n") + tlsConfig(b.tls)
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
