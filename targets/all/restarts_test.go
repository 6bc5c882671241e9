package all_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

// TestRestartsAcceptLogins: after every restart of a server dbsock starts
// (--instances), the server accepts a login over both endpoints at once:
// readiness means a login, never just a listening socket (PostgreSQL
// refused logins while "the database system is starting up"). Restarts per
// target: DBSOCK_RESTARTS (3 here, the rule; scripts/stability.sh runs 50,
// its steadiness).
func TestRestartsAcceptLogins(t *testing.T) {
	n := 3
	if v, err := strconv.Atoi(os.Getenv("DBSOCK_RESTARTS")); err == nil && v > 0 {
		n = v
	}
	for _, target := range []string{"mysql", "redis", "postgres", "memcached", "pgbouncer", "mongo"} {
		t.Run(target, func(t *testing.T) {
			srv := targettest.Local(t, target, targettest.Binaries[target]...)
			tg, _ := targets.Lookup(target)
			d := tg.Settings().Driver(drivers.Workload{})
			for i := 1; i <= n; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := srv.Restart(ctx); err != nil {
					cancel()
					t.Fatalf("restart %d: %v", i, err)
				}
				for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
					if _, err := d.Info(ctx, ep); err != nil {
						t.Errorf("restart %d of %d: a login over %s right after the restart failed: %v", i, n, ep, err)
					}
				}
				cancel()
			}
		})
	}
}
