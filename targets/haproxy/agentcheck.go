package haproxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder where the target behind HAProxy
// does: an agent's connection is found on the server by its token (the
// target's own finder, which sees HAProxy's connection), then in
// HAProxy's sessions by the agent's own TCP address or by HAProxy's
// address as the server saw it (check).
func (d Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	cf, ok := d.Driver.(drivers.ConnFinder)
	if !ok {
		return nil, fmt.Errorf("%s's driver cannot find another process's connection, so an agent's route through HAProxy cannot be verified", d.product)
	}
	in, err := cf.OpenFinder(ctx, admin)
	if err != nil {
		return nil, err
	}
	return &finder{in: in, ep: admin, product: d.product, seen: map[string]drivers.Verification{}}, nil
}

type finder struct {
	in      drivers.Finder
	ep      drivers.Endpoint
	product string
	mu      sync.Mutex
	seen    map[string]drivers.Verification // the server's view of each token's connection, for CheckUse
}

func (f *finder) Expect(ctx context.Context, token string) error { return f.in.Expect(ctx, token) }

// Find reads the server's view of the connection claim names (its own
// address there is HAProxy's, not the agent's), then HAProxy's session of
// it.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	local := claim.LocalAddr
	claim.LocalAddr = ""
	server, err := f.in.Find(ctx, claim)
	if err != nil {
		return server, fmt.Errorf("%s's view of HAProxy's connection for the agent's: %w", f.product, err)
	}
	f.mu.Lock()
	f.seen[claim.Token] = server
	f.mu.Unlock()
	sock, err := statsOf(f.ep)
	if err != nil {
		return drivers.Verification{}, err
	}
	all, err := sessions(ctx, sock)
	if err != nil {
		return drivers.Verification{}, err
	}
	return check(f.ep, all, local, server, f.product)
}

// CountOps implements drivers.OpCounter where the target's finder does:
// the server counts the ops HAProxy relays.
func (f *finder) CountOps(ctx context.Context) (int64, error) {
	if c, ok := f.in.(drivers.OpCounter); ok {
		return c.CountOps(ctx)
	}
	return 0, errors.New("the server behind HAProxy counts no ops")
}

// Counter implements drivers.OpCounter.
func (f *finder) Counter() string {
	if c, ok := f.in.(drivers.OpCounter); ok {
		return c.Counter()
	}
	return ""
}

// CheckUse implements drivers.UseChecker where the target's finder does,
// against the server's view Find read of the same connection.
func (f *finder) CheckUse(ctx context.Context, claim drivers.Claim, _ drivers.Verification, within time.Duration) error {
	u, ok := f.in.(drivers.UseChecker)
	if !ok {
		return nil
	}
	f.mu.Lock()
	server, found := f.seen[claim.Token]
	f.mu.Unlock()
	if !found {
		return fmt.Errorf("the connection named %s was not found before its use was checked", claim.Token)
	}
	claim.LocalAddr = ""
	return u.CheckUse(ctx, claim, server, within)
}

func (f *finder) Close() error { return f.in.Close() }
