package memcached

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// perTransport says in the report why two processes serve the target;
// local says how dbsock started them.
const (
	perTransport = "two memcached instances, one on 127.0.0.1 TCP (-p, and its TLS listener for the tls path) and one on the Unix socket (-s), because memcached -s turns TCP off"
	local        = perTransport + "; started with the same flags and pinned alike"
)

// stopSignal stops a local memcached at once. Its SIGTERM only sets a
// flag that its main thread reads when its event loop next wakes, which
// an idle memcached does once a second (its clock tick), so each stop
// took up to a second, two per restart; and all it does then is exit
// (no flush, nothing written: it keeps its items in memory only), which
// SIGKILL does the same at once.
const stopSignal = syscall.SIGKILL

// memory is each instance's cache size and item limit (--value-size goes
// up to 16 MiB; memcached takes items up to half its memory).
var memory = []string{"-m", "128", "-I", "32m"}

// localServer starts two memcached instances, one per transport.
func localServer(ctx context.Context, l *supply.Local, target string) (*supply.Server, error) {
	_, bin := l.Find(server)
	if bin == "" {
		return nil, supply.NotFound(target, server, "apt-get install "+server+", or run scripts/install-deps.sh")
	}
	password, err := supply.RandomPassword()
	if err != nil {
		return nil, err
	}
	tcp, err := l.Prepare(target, "")
	if err != nil {
		return nil, err
	}
	tcp.StopSignal = stopSignal
	// Both instances take the run's account (-Y: the text protocol's
	// authentication); the file is in each one's private directory.
	tcpAuth, err := authFile(tcp, "memcache", password)
	if err != nil {
		return nil, tcp.Fail(err)
	}
	tf, tlsPort, err := tcp.ServeTLSApart()
	if err != nil {
		return nil, tcp.Fail(err)
	}
	tcp.Bind(",") // the tcp6 path, where this host has ::1
	args := append([]string{"-p", strconv.Itoa(tcp.Port), "-U", "0", "-Y", tcpAuth}, TLSArgs(tf, tlsPort, supply.Loopbacks())...)
	args = append(args, memory...)
	if err := tcp.StartProbe(ctx, "memcached-tcp", bin, args, nil, "", dial("tcp", tcp.TCPAddr())); err != nil {
		return nil, tcp.Fail(err)
	}
	unix, err := l.Prepare(target, "memcached.sock")
	if err != nil {
		return nil, tcp.Fail(err)
	}
	unix.StopSignal = stopSignal
	unixAuth, err := authFile(unix, "memcache", password)
	if err != nil {
		return nil, tcp.Fail(unix.Fail(err))
	}
	args = append([]string{"-s", unix.Sock, "-a", "0700", "-Y", unixAuth}, memory...)
	if err := unix.StartProbe(ctx, "memcached-unix", bin, args, nil, "", dial("unix", unix.Sock)); err != nil {
		return nil, tcp.Fail(unix.Fail(err))
	}
	tcpEP := drivers.Endpoint{Transport: drivers.TCP, Address: tcp.TCPAddr(), User: User, Password: password}
	unixEP := drivers.Endpoint{Transport: drivers.Unix, Address: unix.Sock, User: User, Password: password}
	origin := fmt.Sprintf("local processes %s (pid %d for TCP, pid %d for the socket)", bin, tcp.PID(), unix.PID())
	srv := tcp.Server(target, origin, tcpEP, tcpEP).Join(unix.Server(target, origin, unixEP, unixEP))
	srv.Unix, srv.Serving = unixEP, local
	return srv, nil
}

// authFile makes ls's memcached run as osUser when dbsock runs as root
// (memcached would run as root only with -u root), writes its auth file
// (user:password) into its directory, private to that user, and returns
// its path.
func authFile(ls *supply.LocalServer, osUser, password string) (string, error) {
	if err := ls.Unprivileged(server, osUser); err != nil {
		return "", err
	}
	path := filepath.Join(ls.Dir, "auth")
	if err := os.WriteFile(path, []byte(User+":"+password+"\n"), 0o600); err != nil {
		return "", err
	}
	if err := ls.Own(path); err != nil {
		return "", err
	}
	// memcached reads it as it starts: it is on disk only then.
	return path, ls.HandOver(path)
}

// dial is a readiness probe of one endpoint.
func dial(network, address string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, address)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// TLSArgs turn on TLS with the run's certificate on a listener of its own
// at tlsPort on 127.0.0.1, and keep the listeners on addrs (at -p's port)
// plain ("notls:").
func TLSArgs(tf supply.TLSFiles, tlsPort int, addrs []string) []string {
	var ls []string
	for _, a := range addrs {
		if strings.Contains(a, ":") {
			a = "[" + a + "]"
		}
		ls = append(ls, "notls:"+a)
	}
	ls = append(ls, "127.0.0.1:"+strconv.Itoa(tlsPort))
	return []string{"-Z", "-o", "ssl_chain_cert=" + tf.Cert + ",ssl_key=" + tf.Key, "-l", strings.Join(ls, ",")}
}
