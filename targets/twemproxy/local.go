package twemproxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// statsInterval is nutcracker's stats interval (-i): its stats lag its
// counts by up to a few of them, which each check waits out (settled).
// Short, as each block's audit waits for it twice: aggregating two pools'
// counters that often costs nutcracker little.
const statsInterval = 25 * time.Millisecond

// listens places the two pools: the address each path's pool listens on,
// given nutcracker's TCP address and socket (a test swaps them, to make
// nutcracker lie about a leg).
type listens func(tcp, sock string) (tcpTCP, unixTCP string)

// pools is the true placement: pool tcp-tcp on TCP, unix-tcp on the
// socket.
func pools(tcp, sock string) (string, string) { return tcp, sock }

// noSocketLeg is why the routes with their leg to Redis on its socket are
// not served.
var noSocketLeg = errors.New("twemproxy (nutcracker) reaches its servers over 127.0.0.1 TCP only: it has no way to connect to Redis's Unix socket (twemproxy issue #77), so its leg to Redis is TCP on every route, and only tcp-tcp and unix-tcp are measured")

// localBehind is the local recipe of nutcracker in front of target's
// server: the server by its own target's local recipe, then nutcracker
// with its pools where place puts them.
func localBehind(target string, place listens) func(context.Context, *supply.Local, string) (*supply.Server, error) {
	return func(ctx context.Context, l *supply.Local, name string) (*supply.Server, error) {
		_, bin := l.Find(binary)
		if bin == "" {
			return nil, supply.NotFound(name, binary, "apt-get install nutcracker, or run scripts/install-deps.sh")
		}
		in, ok := targets.Lookup(target)
		if !ok {
			return nil, fmt.Errorf("twemproxy: no target %s to stand in front of", target)
		}
		srv, err := in.Local(ctx, l, name+"-"+target)
		if err != nil {
			return nil, err
		}
		hop, err := start(ctx, l, name, bin, srv, place)
		if err != nil {
			return nil, errors.Join(err, srv.Stop(context.Background()))
		}
		hop.Serving = "twemproxy (nutcracker) in front of " + productOf(in) + " (both started by dbsock, pinned alike), its leg to " + productOf(in) + " on TCP only"
		return hop, nil
	}
}

// start starts nutcracker in front of srv, each pool reaching srv's TCP
// address.
func start(ctx context.Context, l *supply.Local, name, bin string, srv *supply.Server, place listens) (*supply.Server, error) {
	ls, err := l.Prepare(name, string(drivers.UnixHopTCP)+".sock")
	if err != nil {
		return nil, err
	}
	if err := ls.Unprivileged("twemproxy", binary); err != nil {
		return nil, ls.Fail(err)
	}
	statsPort, err := supply.FreePort()
	if err != nil {
		return nil, ls.Fail(err)
	}
	tcpTCP, unixTCP := place(ls.TCPAddr(), ls.Sock)
	backend := srv.TCP()
	cfg, err := config(layout{pools: []pool{{drivers.TCPHopTCP, tcpTCP}, {drivers.UnixHopTCP, unixTCP}}, server: backend.Address, password: backend.Password})
	if err != nil {
		return nil, ls.Fail(err)
	}
	path := filepath.Join(ls.Dir, "nutcracker.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, ls.Fail(fmt.Errorf("twemproxy: write its configuration %s: %w", path, err))
	}
	if err := ls.Own(path); err != nil {
		return nil, ls.Fail(err)
	}
	ls.NoLoopbacks = "the nutcracker dbsock starts listens on 127.0.0.1 and its socket only"
	stats := "127.0.0.1:" + strconv.Itoa(statsPort)
	// nutcracker opens its log itself (-o), as the user it runs as: a
	// file of its own in its directory.
	logPath := filepath.Join(ls.Dir, "own.log")
	args := []string{"-c", path, "-o", logPath, "-s", strconv.Itoa(statsPort), "-a", "127.0.0.1", "-i", strconv.Itoa(int(statsInterval / time.Millisecond))}
	if err := ls.Start(ctx, binary, bin, args, nil, ""); err != nil {
		return nil, ls.Fail(fmt.Errorf("%w; its own log %s ends: %s", err, logPath, tail(logPath)))
	}
	tcp, unix := backend, backend // the account, as Redis's own clients have it
	tcp.Transport, tcp.Address, tcp.Hop = drivers.TCPHopTCP, ls.TCPAddr(), drivers.TCP
	unix.Transport, unix.Address, unix.Hop = drivers.UnixHopTCP, ls.Sock, drivers.TCP
	for _, ep := range []drivers.Endpoint{tcp, unix} {
		hops.Store(ep.Address, hop{stats: stats, interval: statsInterval, pool: string(ep.Transport), redis: backend})
	}
	hop := ls.Server(name, ls.Origin(bin)+" in front of "+srv.Provenance.Origin, tcp, unix)
	own := hop.CPU // nutcracker's process tree alone
	hop = hop.Join(srv)
	hop.SetAbsent(noSocketLeg, drivers.TCP, drivers.Unix)
	if hop.CPU != nil {
		hop.HopCPU = own
	}
	return hop, nil
}

// tail is the end of the file at path, for an error.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	const most = 2000
	if len(b) > most {
		b = b[len(b)-most:]
	}
	return strings.TrimSpace(string(b))
}
