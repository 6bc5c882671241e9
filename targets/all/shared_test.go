package all_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

// The servers this package's tests share, one per provider and target,
// each started on first use and stopped once every test has run
// (TestMain). A test that looks at a running server (its logins, its
// processes, its files, queries on tables of its own) takes the shared
// one; a test that stops it, hangs it, or starts it under conditions of
// its own (its environment, a second instance) starts its own. Restarts
// keep a shared server what it was: the same data, accounts and password.
var shared = struct {
	sync.Mutex
	servers map[string]*sharedServer
}{servers: map[string]*sharedServer{}}

// sharedServer is a server the tests share, with what its recipe's
// Rotate (a container's) was handed.
type sharedServer struct {
	srv *supply.Server
	p   supply.Provider
	err error
	// boot are the bootstrap passwords Rotate was last handed, and took
	// says whether the server took one of them before Rotate changed them.
	mu   sync.Mutex
	boot map[string]string
	took bool
}

// rotated is what Rotate was handed, and whether the server took it.
func (s *sharedServer) rotated() (boot map[string]string, took bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.boot), s.took
}

// sharedLocal is the shared local server of target.
func sharedLocal(t *testing.T, target string) *supply.Server {
	t.Helper()
	return sharedSupplied(t, target, "local").srv
}

// sharedSupplied is the shared server of target from provider (local,
// docker or compose), started now if no test has started it; the test
// is skipped (or failed) as targettest.Supplied's would be.
func sharedSupplied(t *testing.T, target, provider string) *sharedServer {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	s, ok := shared.servers[provider+"/"+target]
	if !ok {
		tg, _ := targets.Lookup(target)
		s = &sharedServer{p: targettest.Provider(t, tg, provider, targettest.Binaries[target])} // skips when the binaries or images are not here
		shared.servers[provider+"/"+target] = s
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		s.srv, s.err = s.p.Supply(ctx, s.watchRotation(tg))
		cancel()
	}
	if s.err != nil {
		t.Fatalf("start the shared %s server (%s): %v", target, provider, s.err)
	}
	return s
}

// watchRotation is tg's recipe, whose Rotate (where its container has
// one) first records the bootstrap passwords it is handed and whether one
// of them logs in.
func (s *sharedServer) watchRotation(tg *targets.Target) supply.Target {
	ct := tg.Supply()
	if ct.Container == nil || ct.Container.Rotate == nil {
		return ct
	}
	c := *ct.Container
	rotate := c.Rotate
	d := tg.Settings().Driver(drivers.Workload{})
	c.Rotate = func(ctx context.Context, srv *supply.Server, boot map[string]string) error {
		took := false
		var probe error
		for _, pw := range boot {
			ep := srv.TCP()
			ep.Password = pw
			if _, err := d.Info(ctx, ep); err == nil {
				took = true
			} else {
				probe = err
			}
		}
		s.mu.Lock()
		s.boot, s.took = maps.Clone(boot), s.took || took
		s.mu.Unlock()
		// Rotate only once a probe has seen whether the server takes a
		// bootstrap password: a server that came up between a failed
		// probe and Rotate would leave the test nothing to check. One
		// that takes the run's password already (a restart) rotates as
		// the recipe does; otherwise the readiness check probes again.
		if !took && probe != nil {
			if _, err := d.Info(ctx, srv.TCP()); err != nil {
				return fmt.Errorf("no bootstrap password logs in yet: %w", probe)
			}
		}
		return rotate(ctx, srv, boot)
	}
	ct.Container = &c
	return ct
}

// stopShared stops the shared servers and closes their providers.
func stopShared() {
	shared.Lock()
	defer shared.Unlock()
	for key, s := range shared.servers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if s.srv != nil {
			_ = s.srv.Stop(ctx)
		}
		_ = s.p.Close()
		cancel()
		delete(shared.servers, key)
	}
}
