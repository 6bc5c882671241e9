package mongo

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
)

func localServer(ctx context.Context, l *compose.Local, name string) (*compose.Server, error) {
	prog, bin := l.Find("mongod", "ferretdb")
	if bin == "" {
		return nil, fmt.Errorf("%w %s: local provider: neither mongod nor ferretdb was found on PATH (%s) (scripts/install-deps.sh builds FerretDB)", compose.ErrCannotSupply, name, compose.SearchPath())
	}
	ls, err := l.Prepare(prog, "")
	if err != nil {
		return nil, err
	}
	if err := ls.Unprivileged(prog, "mongodb", "ferretdb"); err != nil {
		return nil, ls.Fail(err)
	}
	var args, env []string
	password := ""
	if prog == "mongod" {
		ls.Sock = filepath.Join(ls.Dir, "mongodb-"+strconv.Itoa(ls.Port)+".sock")
		args = []string{"--dbpath", ls.Dir, "--port", strconv.Itoa(ls.Port), "--bind_ip", ls.Bind(","), "--ipv6",
			"--unixSocketPrefix", ls.Dir, "--filePermissions", "0700", "--quiet"}
	} else {
		ls.Sock = filepath.Join(ls.Dir, "ferretdb.sock")
		ls.NoTCP6 = "FerretDB listens on one TCP address (its --listen-addr), here 127.0.0.1"
		args = []string{"--handler=sqlite", "--sqlite-url=file:" + ls.Dir + "/", "--state-dir=" + ls.Dir,
			"--listen-addr=" + ls.TCPAddr(), "--listen-unix=" + ls.Sock, "--telemetry=disable",
			"--log-level=warn", "--debug-addr=-",
			// The run's account: FerretDB's SCRAM authentication, the user
			// made in admin at start-up, its password from the environment
			// (never on a command line). Every command but the handshake's
			// then needs it.
			"--test-enable-new-auth", "--setup-database=admin", "--setup-username=" + User}
		if password, err = compose.RandomPassword(); err != nil {
			return nil, ls.Fail(err)
		}
		env = []string{"FERRETDB_SETUP_PASSWORD=" + password}
		tf, tlsPort, err := ls.ServeTLSApart()
		if err != nil {
			return nil, ls.Fail(err)
		}
		args = append(args, TLSArgs(tf, "127.0.0.1:"+strconv.Itoa(tlsPort))...)
	}
	if err := ls.Start(ctx, prog, bin, args, env, ""); err != nil {
		return nil, ls.Fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, ls.PID())
	user := ""
	if password != "" {
		user = User
	}
	return ls.Server(prog, origin,
		drivers.Endpoint{Transport: drivers.TCP, Address: ls.TCPAddr(), User: user, Password: password},
		drivers.Endpoint{Transport: drivers.Unix, Address: ls.Sock, User: user, Password: password}), nil
}

// TLSArgs have FerretDB listen with TLS at addr too, with the run's
// certificate (its plain listener stays as it is).
func TLSArgs(tf compose.TLSFiles, addr string) []string {
	return []string{"--listen-tls=" + addr, "--listen-tls-cert-file=" + tf.Cert, "--listen-tls-key-file=" + tf.Key}
}
