package haproxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// leg picks the endpoint of the server's that a backend reaches: backend
// tcp its TCP address (tcpLeg), backend unix its socket (unixLeg); a test
// swaps them to make HAProxy lie about a leg.
type leg func(drivers.Pair) drivers.Endpoint

func tcpLeg(p drivers.Pair) drivers.Endpoint  { return p.TCP }
func unixLeg(p drivers.Pair) drivers.Endpoint { return p.Unix }

// localBehind is the local recipe of HAProxy in front of target's server:
// the server by its own target's local recipe, then HAProxy with backend
// tcp at the endpoint tcp picks and backend unix at the one unix picks.
func localBehind(target string, tcp, unix leg) func(context.Context, *supply.Local, string) (*supply.Server, error) {
	return func(ctx context.Context, l *supply.Local, name string) (*supply.Server, error) {
		_, bin := l.Find(binary)
		if bin == "" {
			return nil, supply.NotFound(name, binary, "apt-get install haproxy, or run scripts/install-deps.sh")
		}
		in, ok := targets.Lookup(target)
		if !ok {
			return nil, fmt.Errorf("haproxy: no target %s to stand in front of", target)
		}
		srv, err := in.Local(ctx, l, name+"-"+target)
		if err != nil {
			return nil, err
		}
		hop, err := start(ctx, l, name, bin, srv, tcp(srv.Endpoints()), unix(srv.Endpoints()))
		if err != nil {
			return nil, errors.Join(err, srv.Stop(context.Background()))
		}
		hop.Serving = "HAProxy in TCP mode in front of " + productOf(in) + " (both started by dbsock, pinned alike)"
		return hop, nil
	}
}

// start starts HAProxy in front of srv, its backends at tcp and unix.
func start(ctx context.Context, l *supply.Local, name, bin string, srv *supply.Server, tcp, unix drivers.Endpoint) (*supply.Server, error) {
	ls, err := l.Prepare(name, string(drivers.Unix)+".sock")
	if err != nil {
		return nil, err
	}
	if err := runAs(ls, srv.Unix().Address); err != nil {
		return nil, ls.Fail(err)
	}
	port, err := supply.FreePort()
	if err != nil {
		return nil, ls.Fail(err)
	}
	fronts := []frontend{
		{drivers.TCPHopTCP, "127.0.0.1:" + strconv.Itoa(port)},
		{drivers.UnixHopTCP, filepath.Join(ls.Dir, string(drivers.UnixHopTCP)+".sock")},
		{drivers.TCP, ls.TCPAddr()},
		{drivers.Unix, ls.Sock},
	}
	statsSock := filepath.Join(ls.Dir, "stats.sock")
	cfg, err := config(layout{frontends: fronts, tcp: tcp.Address, unix: unix.Address, stats: statsSock})
	if err != nil {
		return nil, ls.Fail(err)
	}
	path := filepath.Join(ls.Dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, ls.Fail(fmt.Errorf("haproxy: write its configuration %s: %w", path, err))
	}
	if err := ls.Own(path); err != nil {
		return nil, ls.Fail(err)
	}
	ls.NoLoopbacks = "the HAProxy dbsock starts listens on 127.0.0.1 and its sockets only"
	// -db: in the foreground, as dbsock's child, which it stops.
	if err := ls.Start(ctx, binary, bin, []string{"-db", "-f", path}, nil, ""); err != nil {
		return nil, ls.Fail(err)
	}
	eps := make([]drivers.Endpoint, 0, len(fronts))
	for _, f := range fronts {
		ep := srv.TCP() // the account, as the server's own clients have it
		ep.Transport, ep.Address, ep.Hop = f.path, f.bind, hopOf(f.path)
		eps = append(eps, ep)
		stats.Store(f.bind, statsSock)
	}
	hop := ls.Server(name, ls.Origin(bin)+" in front of "+srv.Provenance.Origin, eps[2], eps[3])
	own := hop.CPU // HAProxy's process tree alone
	hop = hop.Join(srv)
	hop.Set(eps[0], eps[1])
	if hop.CPU != nil {
		hop.HopCPU = own
	}
	return hop, nil
}

// runAs has HAProxy, when dbsock is root, run as the user that owns the
// server's socket (the server's own user: HAProxy reaches the socket as
// the server's own clients would), or as the haproxy user.
func runAs(ls *supply.LocalServer, sock string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	users := []string{binary}
	if fi, err := os.Stat(sock); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
				users = append([]string{u.Username}, users...)
			}
		}
	}
	return ls.Unprivileged("HAProxy", users...)
}
