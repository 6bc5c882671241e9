package mongo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	gomongo "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// localServer starts mongod, or FerretDB, with authentication and the
// run's account (User in admin), in two steps:
//
//  1. set-up: the server listens on a socket in its private 0700
//     directory only, no TCP at all, and dbsock makes the account there.
//     mongod runs with --auth and makes the first account through its
//     localhost exception, which it grants to a connection over its Unix
//     socket while it has no user; FerretDB (which has no such exception)
//     makes its set-up user, with an empty password, as it starts, and
//     dbsock gives that user the run's password (updateUser).
//  2. the run: the same data with authentication on TCP (127.0.0.1, ::1
//     for mongod) and the socket; mongod with the localhost exception off
//     (enableLocalhostAuthBypass=false), so that no connection at all gets
//     in without the run's password.
//
// The window in which an account-less or empty-password server listens is
// so reachable only through a socket in a directory that no other user
// may enter (the official mongo image, which runs its temporary server on
// 127.0.0.1 while it makes the account, leaves that port open to every
// local user meanwhile). The password reaches the server over that
// socket, never through a command line, an environment or a file.
func localServer(ctx context.Context, l *supply.Local, name string) (*supply.Server, error) {
	prog, bin := l.Find("mongod", "ferretdb")
	if bin == "" {
		return nil, fmt.Errorf("%w %s: local provider: neither mongod nor ferretdb was found on PATH (%s) (scripts/install-deps.sh builds FerretDB)", supply.ErrCannotSupply, name, supply.SearchPath())
	}
	ls, err := l.Prepare(prog, "")
	if err != nil {
		return nil, err
	}
	if err := ls.Unprivileged(prog, "mongodb", "ferretdb"); err != nil {
		return nil, ls.Fail(err)
	}
	password, err := supply.RandomPassword()
	if err != nil {
		return nil, ls.Fail(err)
	}
	setupSock := filepath.Join(ls.Dir, "setup.sock") // the Go driver dials a path ending in "sock" as a socket
	var setup, args []string
	if prog == "mongod" {
		ls.Sock = filepath.Join(ls.Dir, "mongodb-"+strconv.Itoa(ls.Port)+".sock")
		setup, args = mongodArgs(ls, setupSock, true), mongodArgs(ls, ls.Bind(","), false)
	} else {
		ls.Sock = filepath.Join(ls.Dir, "ferretdb.sock")
		ls.NoLoopbacks = "FerretDB listens on one TCP address (its --listen-addr), here 127.0.0.1"
		setup = append(ferretdbArgs(ls, "", setupSock), "--setup-database=admin", "--setup-username="+User)
		tf, tlsPort, err := ls.ServeTLSApart()
		if err != nil {
			return nil, ls.Fail(err)
		}
		args = append(ferretdbArgs(ls, ls.TCPAddr(), ls.Sock), TLSArgs(tf, "127.0.0.1:"+strconv.Itoa(tlsPort))...)
	}
	if err := ls.StartProbe(ctx, prog+"-setup", bin, setup, nil, "", dialUnix(setupSock)); err != nil {
		return nil, ls.Fail(err)
	}
	if err := makeAccount(ctx, prog, setupSock, password); err != nil {
		return nil, ls.Fail(fmt.Errorf("make the run's account on %s over its private socket %s: %w", prog, setupSock, err))
	}
	if err := ls.StopProcess(); err != nil {
		return nil, ls.Fail(err)
	}
	_ = os.Remove(setupSock) // a server killed in set-up leaves it
	if err := ls.Start(ctx, prog, bin, args, nil, ""); err != nil {
		return nil, ls.Fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, ls.PID())
	tcp, unix := supply.Served(drivers.Endpoint{User: User, Password: password}, ls.TCPAddr(), ls.Sock)
	return ls.Server(prog, origin, tcp, unix), nil
}

// mongodArgs are mongod's flags, with authentication on: for set-up,
// bound to the private socket path bind alone, with the localhost
// exception (mongod listens on each --bind_ip entry, a path being a Unix
// socket, plus its own DIR/mongodb-PORT.sock, also in the private dir: no
// TCP port; a connection over a Unix socket counts as local); for the
// run, bound to the loopback addresses bind, with its socket in its
// directory and the exception off.
func mongodArgs(ls *supply.LocalServer, bind string, setup bool) []string {
	args := []string{"--auth", "--dbpath", ls.Dir, "--port", strconv.Itoa(ls.Port), "--bind_ip", bind,
		"--unixSocketPrefix", ls.Dir, "--filePermissions", "0700", "--quiet",
		"--setParameter", "enableLocalhostAuthBypass=" + strconv.FormatBool(setup)}
	if !setup {
		args = append(args, "--ipv6")
	}
	return args
}

// ferretdbArgs are FerretDB's flags on SQLite in ls's directory, with
// authentication (its SCRAM authentication: every command but the
// handshake's needs a login), listening at tcp ("": no TCP) and socket.
func ferretdbArgs(ls *supply.LocalServer, tcp, socket string) []string {
	return []string{"--handler=sqlite", "--sqlite-url=file:" + ls.Dir + "/", "--state-dir=" + ls.Dir,
		"--listen-addr=" + tcp, "--listen-unix=" + socket, "--telemetry=disable",
		"--log-level=warn", "--debug-addr=-", "--test-enable-new-auth"}
}

// makeAccount makes the run's account over the set-up server's socket:
// mongod's first user, through its localhost exception (no login), with
// the root role; FerretDB's set-up user gets its password (a login with
// the empty one it was made with).
func makeAccount(ctx context.Context, prog, socket, password string) error {
	opts, err := ClientOptions(drivers.SocketAt(socket))
	if err != nil {
		return err
	}
	cmd := bson.D{{Key: "createUser", Value: User}, {Key: "pwd", Value: password},
		{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "root"}, {Key: "db", Value: "admin"}}}}}
	if prog != "mongod" {
		opts.SetAuth(options.Credential{Username: User, Password: "", PasswordSet: true})
		cmd = bson.D{{Key: "updateUser", Value: User}, {Key: "pwd", Value: password}}
	}
	client, err := gomongo.Connect(opts)
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	// The command holds the password: an error names the command only.
	if err := client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		var ce gomongo.CommandError
		if errors.As(err, &ce) {
			return fmt.Errorf("%s refused %s: %s (code %d)", prog, cmd[0].Key, ce.Message, ce.Code)
		}
		return fmt.Errorf("%s: %s: %w", prog, cmd[0].Key, err)
	}
	return nil
}

// dialUnix is a readiness probe of a socket alone.
func dialUnix(path string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", path)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// TLSArgs have FerretDB listen with TLS at addr too, with the run's
// certificate (its plain listener stays as it is).
func TLSArgs(tf supply.TLSFiles, addr string) []string {
	return []string{"--listen-tls=" + addr, "--listen-tls-cert-file=" + tf.Cert, "--listen-tls-key-file=" + tf.Key}
}
