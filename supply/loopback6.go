package supply

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Loopbacks are the addresses a server dbsock starts listens on for TCP:
// 127.0.0.1, and ::1 where this host has it (the tcp6 path).
func Loopbacks() []string {
	if ok, _ := IPv6Loopback(); ok {
		return []string{"127.0.0.1", "::1"}
	}
	return []string{"127.0.0.1"}
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

// TCP6Of is the TCP endpoint ep on the IPv6 loopback: [::1] at the same
// port, with the same account.
func TCP6Of(ep drivers.Endpoint) drivers.Endpoint {
	_, port, _ := net.SplitHostPort(ep.Address)
	ep.Transport, ep.Address = drivers.TCP6, net.JoinHostPort("::1", port)
	return ep
}

// OfferTCP6 sets srv.TCP6 when the server accepts on [::1] at its TCP
// port, as its recipe asked it to (asked); otherwise it says why not in
// srv.NoTCP6, with why (the recipe's own reason) when given.
func OfferTCP6(ctx context.Context, srv *Server, asked bool, why string) {
	srv.TCP6, srv.NoTCP6 = drivers.Endpoint{}, ""
	if ok, no := IPv6Loopback(); !ok {
		srv.NoTCP6 = no
		return
	}
	if !asked {
		srv.NoTCP6 = why
		if why == "" {
			srv.NoTCP6 = "its server listens on 127.0.0.1 only"
		}
		return
	}
	ep := TCP6Of(srv.TCP)
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp6", ep.Address)
	if err != nil {
		srv.NoTCP6 = fmt.Sprintf("its server does not accept on %s (%v)", ep.Address, err)
		if why != "" {
			srv.NoTCP6 = why
		}
		return
	}
	c.Close()
	srv.TCP6 = ep
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
