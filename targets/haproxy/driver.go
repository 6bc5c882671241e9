package haproxy

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/dbsock/dbsock/drivers"
)

// Driver is the driver of the target behind HAProxy (its client speaks to
// HAProxy as to that server: HAProxy in TCP mode relays bytes), whose
// connections are verified on both legs (check).
type Driver struct {
	drivers.Driver
	name, product string // the hop target's name; the server's product
}

// Name implements drivers.Driver.
func (d Driver) Name() string { return d.name }

// Describe implements drivers.Driver.
func (d Driver) Describe() string { return d.Driver.Describe() + ", through HAProxy (TCP mode)" }

// Info implements drivers.Driver: HAProxy's version from its stats
// socket, in front of the server behind it.
func (d Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	backend, err := d.Driver.Info(ctx, ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	stats, err := statsOf(ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	v, err := version(ctx, stats)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	return drivers.ServerInfo{Product: "HAProxy", Version: v, Detail: "TCP mode in front of " + backend.String()}, nil
}

// AgentOp implements drivers.AgentOp: an agent does the server's own op
// through HAProxy, as to the server.
func (d Driver) AgentOp() drivers.AgentLookup {
	if a, ok := d.Driver.(drivers.AgentOp); ok {
		return a.AgentOp()
	}
	return drivers.AgentLookup{}
}

// Open implements drivers.Driver.
func (d Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	c, err := d.Driver.Open(ctx, ep)
	if err != nil {
		return nil, err
	}
	base := Conn{Conn: c, ep: ep, product: d.product}
	if k, ok := c.(drivers.Keyed); ok {
		return &keyedConn{Conn: base, keyed: k}, nil
	}
	return &base, nil
}

// Conn is one client connection through HAProxy.
type Conn struct {
	drivers.Conn
	ep      drivers.Endpoint
	product string
}

// localAddr is the client's own address of a TCP connection, read by the
// target's conn where it says ("" on a socket, or when it does not).
func (c *Conn) localAddr() string {
	if l, ok := c.Conn.(interface{ LocalAddr() net.Addr }); ok && l.LocalAddr() != nil {
		if a, ok := l.LocalAddr().(*net.TCPAddr); ok {
			return a.String()
		}
	}
	return ""
}

// Verify implements drivers.Conn: the server's view of HAProxy's
// connection (the target's own Verify, through this connection), then
// HAProxy's session of this connection (check).
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	server, err := c.Conn.Verify(ctx)
	if err != nil {
		return server, fmt.Errorf("read %s's view of HAProxy's connection through %s: %w", c.product, c.ep, err)
	}
	stats, err := statsOf(c.ep)
	if err != nil {
		return drivers.Verification{}, err
	}
	all, err := sessions(ctx, stats)
	if err != nil {
		return drivers.Verification{}, err
	}
	return check(c.ep, all, c.localAddr(), server, c.product)
}

// keyedConn is a Conn whose target's conn does one op on a key.
type keyedConn struct {
	Conn
	keyed drivers.Keyed
}

func (c *keyedConn) UseKeys(ids []int64)                            { c.keyed.UseKeys(ids) }
func (c *keyedConn) DoKey(ctx context.Context, i int, w bool) error { return c.keyed.DoKey(ctx, i, w) }

// stats maps each address of a HAProxy dbsock started (its frontends') to
// its stats socket, while it runs.
var stats sync.Map

// statsOf is the stats socket of the HAProxy that serves ep.
func statsOf(ep drivers.Endpoint) (string, error) {
	if s, ok := stats.Load(ep.Address); ok {
		return s.(string), nil
	}
	return "", fmt.Errorf("no HAProxy dbsock started listens at %s, so its stats socket is not known: --via haproxy measures a HAProxy dbsock starts (--provider local or docker)", ep)
}
