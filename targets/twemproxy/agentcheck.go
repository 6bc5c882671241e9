package twemproxy

import (
	"context"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder. nutcracker shows no
// connection of its own and relays no CLIENT command, so an agent's
// connection carries no name: the finder reads the pool of admin's path
// before the agent opens it (Expect) and finds it as the one new client
// connection that pool counts since (Find), then Redis's own list of its
// clients for the leg to it; each block's lookups are counted by that
// pool's requests (CountOps). A verification weaker than a name's, on a
// nutcracker only the run uses.
func (d Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	h, err := hopOf(admin)
	if err != nil {
		return nil, err
	}
	return &finder{h: h, ep: admin}, nil
}

type finder struct {
	h        hop
	ep       drivers.Endpoint
	before   poolStats
	expected bool
}

// Anonymous implements drivers.Anonymous: nutcracker names no connection.
func (*finder) Anonymous() {}

// Expect reads the pool's counts before the agent opens its connection.
func (f *finder) Expect(ctx context.Context, _ string) error {
	s, err := f.h.settled(ctx)
	if err != nil {
		return err
	}
	f.before, err = s.pool(f.h.pool)
	f.expected = err == nil
	return err
}

// Find is the one client connection the path's pool counts since Expect,
// and Redis's view of nutcracker's connections.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	if !f.expected {
		return drivers.Verification{}, fmt.Errorf("twemproxy: Find without Expect")
	}
	want := f.before.clientConnections + 1
	_, now, ok, err := f.h.until(ctx, func(p poolStats) bool { return p.clientConnections >= want })
	if err != nil {
		return drivers.Verification{}, err
	}
	if !ok {
		return drivers.Verification{}, fmt.Errorf("nutcracker's pool %s holds %d client connections, not the %d it held before the agent opened its own plus that one: the agent's connection on the %s path did not reach the pool its path names (stats of pool %s before: %s; after: %s)",
			f.h.pool, now.clientConnections, want, f.ep.Transport, f.h.pool, f.before, now)
	}
	server, err := f.h.serverLeg(ctx)
	if err != nil {
		return drivers.Verification{}, err
	}
	v := drivers.Verification{Transport: f.ep.Transport.Seen(), Peer: claim.LocalAddr,
		Evidence: fmt.Sprintf("nutcracker's stats: pool %s holds a new client connection (%s); the hop's leg: %s", f.h.pool, now, server)}
	return v, nil
}

// CountOps implements drivers.OpCounter: the requests the path's pool
// relayed to Redis, once every request sent before the call is counted.
func (f *finder) CountOps(ctx context.Context) (int64, error) {
	s, err := f.h.settled(ctx)
	if err != nil {
		return 0, err
	}
	p, err := s.pool(f.h.pool)
	return p.requests(), err
}

// Counter implements drivers.OpCounter.
func (*finder) Counter() string {
	return "count of requests in nutcracker's pool of each connection's path (its stats port)"
}

func (*finder) Close() error { return nil }
