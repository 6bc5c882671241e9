package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

func localServer(ctx context.Context, l *supply.Local, name string) (*supply.Server, error) {
	_, bin := l.Find("redis-server")
	if bin == "" {
		return nil, fmt.Errorf("%w %s: local provider: redis-server was not found on PATH (%s) (apt-get install redis-server, or run scripts/install-deps.sh)", supply.ErrCannotSupply, name, supply.SearchPath())
	}
	ls, err := l.Prepare(name, "redis.sock")
	if err != nil {
		return nil, err
	}
	// SIGTERM only sets a flag that Redis reads in its next cron tick (up
	// to 100 ms at hz 10), and then, without persistence, it only exits:
	// SIGKILL stops it the same way at once.
	ls.StopSignal = syscall.SIGKILL
	if err := ls.Unprivileged("redis-server", "redis"); err != nil {
		return nil, ls.Fail(err)
	}
	password, err := supply.RandomPassword()
	if err != nil {
		return nil, ls.Fail(err)
	}
	tf, tlsPort, err := ls.ServeTLSApart()
	if err != nil {
		return nil, ls.Fail(err)
	}
	// The configuration, password included, goes through stdin ("-") so that
	// it never shows in the process listing.
	conf := strings.Join([]string{
		"port " + strconv.Itoa(ls.Port),
		"bind " + ls.Bind(" "),
		"unixsocket " + ls.Sock,
		"unixsocketperm 700",
		`save ""`,
		"appendonly no",
		"dir " + ls.Dir,
		"daemonize no",
		"requirepass " + password,
		"",
	}, "\n") + TLSConfig(tlsPort, tf)
	if err := ls.Start(ctx, "redis-server", bin, []string{"-"}, nil, conf); err != nil {
		return nil, ls.Fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, ls.PID())
	return ls.Server(name, origin,
		drivers.Endpoint{Transport: drivers.TCP, Address: ls.TCPAddr(), Password: password},
		drivers.Endpoint{Transport: drivers.Unix, Address: ls.Sock, Password: password}), nil
}

// TLSConfig is the configuration that has a server also listen with TLS at
// tlsPort (on the addresses of its bind), with the run's certificate,
// clients not asked for one.
func TLSConfig(tlsPort int, tf supply.TLSFiles) string {
	return strings.Join([]string{
		"tls-port " + strconv.Itoa(tlsPort),
		"tls-cert-file " + tf.Cert,
		"tls-key-file " + tf.Key,
		"tls-ca-cert-file " + tf.CA,
		"tls-auth-clients no",
		"",
	}, "\n")
}
