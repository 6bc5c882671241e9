package supply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Loopbacks are the addresses a server dbsock starts listens on for TCP:
// every loopback host of the table (drivers.Hosts: 127.0.0.1, and ::1
// where this host has it, for the tcp6 path).
func Loopbacks() []string {
	var hosts []string
	for _, h := range drivers.Hosts() {
		if ok, _ := IPv6Loopback(); ok || !strings.Contains(h, ":") {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

var loopback6 = sync.OnceValues(func() (bool, string) {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false, fmt.Sprintf("this host has no IPv6 loopback (listening on [::1] failed: %v)", err)
	}
	l.Close()
	return true, ""
})

// IPv6Loopback says whether this host has the IPv6 loopback, ::1 (a
// kernel or a container may have IPv6 off), and when not, why.
func IPv6Loopback() (bool, string) { return loopback6() }

// Aliases are the paths to a server's own TCP listener on another
// loopback host than tcp's, host (the table's paths with a Host: tcp6's
// ::1), at the same port.
func Aliases(host string) []drivers.PathInfo {
	var paths []drivers.PathInfo
	for _, p := range drivers.PathTable {
		if p.Host != "" && !p.TLS && p.Repeats == "" && p.Host != host {
			paths = append(paths, p)
		}
	}
	return paths
}

// AliasOf is the TCP endpoint ep on path p's host at the same port, with
// the same account.
func AliasOf(ep drivers.Endpoint, p drivers.PathInfo) drivers.Endpoint {
	_, port, _ := net.SplitHostPort(ep.Address)
	ep.Transport, ep.Address = p.Path, net.JoinHostPort(p.Host, port)
	return ep
}

// OfferLoopbacks gives srv each path of Aliases where the server accepts
// at its TCP port, as its recipe asked it to (asked: it listens on every
// one of Loopbacks); otherwise it says why not, with why (the recipe's
// own reason) when given.
func OfferLoopbacks(ctx context.Context, srv *Server, asked bool, why string) {
	host, _, err := net.SplitHostPort(srv.TCP().Address)
	if err != nil {
		return // an instance that serves no TCP: the server's other one does
	}
	for _, p := range Aliases(host) {
		ep := AliasOf(srv.TCP(), p)
		if err := offerAlias(ctx, ep, asked, why); err != nil {
			srv.SetAbsent(err, p.Path)
		} else {
			srv.Set(ep)
		}
	}
}

// offerAlias says why a server does not serve ep, or nil when it accepts
// there.
func offerAlias(ctx context.Context, ep drivers.Endpoint, asked bool, why string) error {
	host, _, _ := net.SplitHostPort(ep.Address)
	if ok, no := IPv6Loopback(); !ok && strings.Contains(host, ":") {
		return errors.New(no)
	}
	if !asked {
		return errors.New(cmp.Or(why, "its server listens on 127.0.0.1 only"))
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, ep.Transport.Network(), ep.Address)
	if err != nil {
		return errors.New(cmp.Or(why, fmt.Sprintf("its server does not accept on %s (%v)", ep.Address, err)))
	}
	c.Close()
	return nil
}

// freePort6 is a port free on 127.0.0.1 and, where this host has it, on
// ::1 too, so that a server listening on both can start.
func freePort6() (int, error) {
	var err error
	for range 20 {
		var port int
		if port, err = FreePort4(); err != nil {
			return 0, err
		}
		if ok, _ := IPv6Loopback(); !ok {
			return port, nil
		}
		var l net.Listener
		if l, err = net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("find a port free on both 127.0.0.1 and ::1: %w", err)
}
