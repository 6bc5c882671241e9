package twemproxy

import (
	"context"
	"fmt"
	"net"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets/redis"
)

// Driver is the Redis driver through nutcracker (its client speaks to
// nutcracker as to Redis, in RESP2), whose connections are verified on
// both legs (Conn.Verify). nutcracker relays data commands only: CLIENT,
// INFO and HELLO it refuses by closing the connection, so a connection is
// never named (CLIENT SETNAME) nor asked about itself (CLIENT INFO), and
// Redis's own view is read over a connection of dbsock's own to it.
type Driver struct {
	drivers.Driver        // the Redis driver, WithoutHello
	name, server   string // the hop target's name; the server's product
	w              drivers.Workload
}

// Name implements drivers.Driver.
func (d Driver) Name() string { return d.name }

// Describe implements drivers.Driver.
func (d Driver) Describe() string {
	return d.Driver.Describe() + ", through twemproxy (nutcracker, RESP2)"
}

// Info implements drivers.Driver: nutcracker's version from its stats
// port, in front of Redis as Redis itself says (INFO over a connection of
// dbsock's own to it: nutcracker relays no INFO).
func (d Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	h, err := hopOf(ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	backend, err := redis.New(2, false, d.w).Info(ctx, h.redis)
	if err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask %s behind nutcracker for INFO at %s: %w", d.server, h.redis, err)
	}
	s, err := readStats(ctx, h.stats)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	return drivers.ServerInfo{Product: "twemproxy", Version: s.version, Detail: "nutcracker in front of " + backend.String()}, nil
}

// Open implements drivers.Driver.
func (d Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	c, err := d.Driver.Open(ctx, ep)
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c.(*redis.Conn), ep: ep, server: d.server}, nil
}

// OpenNamed implements drivers.NamedOpener as Open: nutcracker takes no
// CLIENT SETNAME, and the finder tells a new connection by its pool's
// count (finder.Find).
func (d Driver) OpenNamed(ctx context.Context, ep drivers.Endpoint, _ string) (drivers.Conn, error) {
	return d.Open(ctx, ep)
}

// AgentOp implements drivers.AgentOp: an agent GETs each key through
// nutcracker, as from Redis.
func (d Driver) AgentOp() drivers.AgentLookup { return d.Driver.(drivers.AgentOp).AgentOp() }

// OpenExecStats implements drivers.ExecStatter with Redis's own INFO
// commandstats, over a connection of dbsock's own to it: the GETs
// nutcracker relays are the ones Redis executes.
func (d Driver) OpenExecStats(ctx context.Context, ep drivers.Endpoint) (drivers.ExecReader, string, error) {
	h, err := hopOf(ep)
	if err != nil {
		return nil, "", err
	}
	return redis.New(2, false, d.w).OpenExecStats(ctx, h.redis)
}

// Conn is one client connection through nutcracker.
type Conn struct {
	*redis.Conn
	ep     drivers.Endpoint
	server string
}

// probes is how many GETs Verify sends on a connection for its pool to
// count.
const probes = 3

// Verify implements drivers.Conn: the connection sends probes GETs of
// row 1's key, which the pool its path names must count (the client's
// leg, nutcracker's stats), then Redis's list of its clients shows
// nutcracker's connections over TCP (the leg to Redis).
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	h, err := hopOf(c.ep)
	if err != nil {
		return drivers.Verification{}, err
	}
	before, err := h.settled(ctx)
	if err != nil {
		return drivers.Verification{}, err
	}
	was, err := before.pool(h.pool)
	if err != nil {
		return drivers.Verification{}, err
	}
	for range probes {
		if err := c.Command(ctx, "GET", redis.Key); err != nil {
			return drivers.Verification{}, fmt.Errorf("GET %s through nutcracker over %s, for its pool to count: %w", redis.Key, c.ep, err)
		}
	}
	_, now, _, err := h.until(ctx, func(p poolStats) bool { return p.requests()-was.requests() >= probes })
	if err != nil {
		return drivers.Verification{}, err
	}
	client, err := poolLeg(c.ep.Transport, was, now, probes, fmt.Sprintf("this connection's %d GETs", probes))
	if err != nil {
		return drivers.Verification{}, err
	}
	server, err := h.serverLeg(ctx)
	if err != nil {
		return drivers.Verification{}, err
	}
	v := drivers.Verification{Transport: c.ep.Transport.Seen(), Evidence: client + "; the hop's leg: " + server}
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok && a != nil {
		v.Peer = a.String()
	}
	return v, nil
}
