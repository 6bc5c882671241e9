package drivers

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
)

// A connection another process opened (a client stack's agent, see
// package agents) is checked on the server side before any of its ops is
// timed: dbsock's own connection asks the server for the one connection
// that carries the token dbsock gave it, and reads its route there.

// Claim is what identifies a connection another process opened, and what
// that process says of it.
type Claim struct {
	// Token is the name dbsock gave the connection to carry where the
	// server shows it (a client name, an application name, a user lock:
	// each target's own).
	Token string
	// ConnID is the server's id of the connection as the other process
	// read it ("" when it gave none).
	ConnID string
	// LocalAddr is the other process's own IP:PORT of a TCP connection
	// ("" when it gave none or is on the socket).
	LocalAddr string
}

// ConnFinder is an optional capability of a Driver whose server can show
// the connections other processes opened: OpenFinder opens a connection
// of dbsock's own on admin, through which the Finder asks.
type ConnFinder interface {
	OpenFinder(ctx context.Context, admin Endpoint) (Finder, error)
}

// Finder asks a server about connections other processes opened.
type Finder interface {
	// Expect is called before the other process opens the connection
	// that will carry token (a server that shows no name records which
	// connections it has).
	Expect(ctx context.Context, token string) error
	// Find returns what the server says of the route of the one
	// connection claim identifies, or an error when it finds none or
	// more than one, or when what the server shows contradicts claim.
	Find(ctx context.Context, claim Claim) (Verification, error)
	// Close closes dbsock's own connection.
	Close() error
}

// Anonymous is an optional capability of a Finder whose server shows no
// name of a connection: it finds another process's connection as the one
// new since Expect, so it cannot find it again once another has opened.
type Anonymous interface{ Anonymous() }

// SameAddr says whether two IP:PORT addresses, as a server or a client
// library prints them ("[::1]:5432", "::1:5432", "127.0.0.1:5432"), are
// the same.
func SameAddr(a, b string) bool {
	pa, oka := parseHostPort(a)
	pb, okb := parseHostPort(b)
	if !oka || !okb {
		return a == b
	}
	return pa == pb
}

func parseHostPort(s string) (netip.AddrPort, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return netip.AddrPort{}, false
	}
	ip, err := netip.ParseAddr(strings.Trim(s[:i], "[]"))
	if err != nil {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(s[i+1:], 10, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), true
}
