package echo

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder: another process's connection
// says its token in a hello frame before its first message, and dbsock's
// own connection asks the server for it (see Registry).
func (*Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	return DialFinder(ctx, admin, "echo server")
}

// AgentOp implements drivers.AgentOp: an agent's op is the ping-pong of
// one message, whose size in bytes is the key (it writes that many bytes,
// the first of them "ping", and reads them back).
func (d *Driver) AgentOp() drivers.AgentLookup {
	size := int64(d.size)
	return drivers.AgentLookup{Family: "pingpong", Key: func(int64) any { return size }}
}

// DialFinder opens dbsock's own connection to one of its ping-pong
// servers (server names it in errors, "echo server") on admin, through
// which the Finder asks for the connection that said hello with a token.
func DialFinder(ctx context.Context, admin drivers.Endpoint, server string) (drivers.Finder, error) {
	dialer := net.Dialer{Timeout: 10 * time.Second}
	nc, err := dialer.DialContext(ctx, admin.Transport.Network(), admin.Address)
	if err != nil {
		return nil, fmt.Errorf("connect to the %s over %s to verify another process's connections: %w", server, admin, err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ReadGreeting(nc); err != nil {
		nc.Close()
		return nil, fmt.Errorf("the %s over %s, to verify another process's connections: %w", server, admin, err)
	}
	return &finder{nc: nc, server: server}, nil
}

type finder struct {
	nc     net.Conn
	server string
}

func (*finder) Expect(context.Context, string) error { return nil }

// Find asks the server for the one connection that said hello with
// claim.Token.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(10 * time.Second)
	}
	_ = f.nc.SetDeadline(dl)
	b, err := Frame("find " + claim.Token)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("ask the %s for token %s: %w", f.server, claim.Token, err)
	}
	if _, err := f.nc.Write(b); err != nil {
		return drivers.Verification{}, fmt.Errorf("ask the %s for token %s: %w", f.server, claim.Token, err)
	}
	answer, err := ReadFrame(f.nc)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("ask the %s for token %s: no answer: %w", f.server, claim.Token, err)
	}
	switch {
	case answer == "none":
		return drivers.Verification{}, fmt.Errorf("the %s has no connection that said hello with token %s (an agent sends it as its connection's first frame)", f.server, claim.Token)
	case strings.HasPrefix(answer, "many "):
		return drivers.Verification{}, fmt.Errorf("the %s has %s connections that said hello with token %s; one is the protocol", f.server, strings.TrimPrefix(answer, "many "), claim.Token)
	}
	p, err := ParseFound(answer)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("ask the %s for token %s: %w", f.server, claim.Token, err)
	}
	return CheckClaim(f.server, p, claim)
}

// CheckClaim is what server's record p of a connection says of its route,
// or an error when it contradicts what the other process claims of it.
func CheckClaim(server string, p Peer, claim drivers.Claim) (drivers.Verification, error) {
	t, ok := drivers.NetworkPath(p.Network)
	if !ok {
		return drivers.Verification{}, fmt.Errorf("the %s reports unknown network %q", server, p.Network)
	}
	v := drivers.Verification{Transport: t, Evidence: fmt.Sprintf("%s sees connection %d with the token on %s, peer %s", server, p.ID, p.Network, p.Addr)}
	if p.PID > 0 {
		v.Evidence += ", pid " + strconv.Itoa(p.PID)
	}
	if p.Network != "unix" {
		v.Peer = p.Addr
	}
	if claim.ConnID != "" && claim.ConnID != strconv.FormatUint(p.ID, 10) {
		return v, fmt.Errorf("the agent says its connection is %s's number %s, the server numbers the one with its token %d", server, claim.ConnID, p.ID)
	}
	if claim.LocalAddr != "" && p.Network != "unix" && !drivers.SameAddr(claim.LocalAddr, p.Addr) {
		return v, fmt.Errorf("the agent says its connection is from %s, the %s sees it from %s", claim.LocalAddr, server, p.Addr)
	}
	return v, nil
}

func (f *finder) Close() error { return f.nc.Close() }
