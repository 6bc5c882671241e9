package main

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/results"
)

// TestPostgresViaPgBouncer: postgres --via pgbouncer measures PostgreSQL
// through the PgBouncer dbsock starts, over the four routes of two legs,
// each compared with both legs on TCP, each run's legs verified.
func TestPostgresViaPgBouncer(t *testing.T) {
	testutil.NeedAny(t, "pgbouncer")
	rep := runJSON(t, "run", "postgres", "--via", "pgbouncer", "--n", "200", "--warmup", "20", "--instances", "1", "--blocks", "4")
	seen := hopRoutes(t, rep, "pgbouncer")
	if len(seen) != 4 || len(rep.HopMoves(&rep.Summary[0])) != 3 {
		t.Errorf("paths %v and %d comparisons read as legs; want the four routes and 3", seen, len(rep.HopMoves(&rep.Summary[0])))
	}
}

// TestRedisAndMySQLViaHAProxy: redis mysql --via haproxy measures both
// servers through the HAProxy dbsock starts in front of each, over the
// four routes, from Go's client and the C and Python agents (which speak
// to HAProxy as to the server), each run's legs verified from HAProxy's
// sessions and the server's view.
func TestRedisAndMySQLViaHAProxy(t *testing.T) {
	testutil.NeedAny(t, "haproxy")
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "mariadbd", "mysqld")
	// Two server instances: Redis, which keeps nothing over a restart, is
	// seeded again through HAProxy.
	rep := runJSON(t, "run", "redis", "mysql", "--via", "haproxy", "--clients", "go,c,python",
		"--n", "200", "--warmup", "20", "--instances", "2", "--blocks", "4")
	if len(rep.Targets) != 2 || rep.Targets[0].Name != "haproxy-redis" || rep.Targets[1].Name != "haproxy-mysql" || rep.Config.Baseline != drivers.TCPHopTCP {
		t.Fatalf("targets %+v, baseline %q; want haproxy-redis and haproxy-mysql against tcp-tcp", rep.Targets, rep.Config.Baseline)
	}
	for _, tg := range rep.Targets {
		if len(tg.Skipped) != 0 {
			t.Errorf("%s: stacks skipped: %+v", tg.Name, tg.Skipped)
		}
	}
	seen := map[string]bool{}
	for _, r := range rep.Runs {
		lang := "go"
		if r.Client != nil {
			lang = r.Client.Language
		}
		seen[r.Target+" "+lang+" "+string(r.Transport)] = true
		if !r.TransportVerified || r.Endpoint.Hop == "" || !strings.Contains(r.Evidence, "HAProxy's show sess") || !strings.Contains(r.Evidence, "frontend="+string(r.Transport)+" ") {
			t.Errorf("%s %s %s: verified %v, hop's leg %q (%s)", r.Target, lang, r.Transport, r.TransportVerified, r.Endpoint.Hop, r.Evidence)
		}
	}
	if len(seen) != 2*3*4 {
		t.Errorf("%d (target, stack, path) measured, want 24: %v", len(seen), seen)
	}
}

// TestTwemproxyNamedAlone: "dbsock run twemproxy-redis", the target
// dbsock targets lists, is run as "redis --via twemproxy": over the two
// routes its hop serves, against both legs on TCP, from the local
// provider; it ran the default paths, none of which twemproxy serves, and
// panicked on a case with no path.
func TestTwemproxyNamedAlone(t *testing.T) {
	testutil.NeedAny(t, "nutcracker")
	testutil.NeedAny(t, "redis-server")
	rep := runJSON(t, "run", "twemproxy-redis", "--n", "200", "--warmup", "20", "--instances", "1", "--blocks", "4", "--placement", "none")
	seen := hopRoutes(t, rep, "twemproxy-redis")
	if len(seen) != 2 || !seen[drivers.TCPHopTCP] || !seen[drivers.UnixHopTCP] {
		t.Errorf("paths measured %v, want tcp-tcp and unix-tcp", seen)
	}
}

// hopRoutes checks that rep measured the one target hop against both legs
// on TCP, every run's legs verified, and returns the routes it measured.
func hopRoutes(t *testing.T, rep *results.Report, hop string) map[drivers.Transport]bool {
	t.Helper()
	if len(rep.Targets) != 1 || rep.Targets[0].Name != hop || rep.Config.Baseline != drivers.TCPHopTCP {
		t.Fatalf("targets %+v, baseline %q; want %s against tcp-tcp", rep.Targets, rep.Config.Baseline, hop)
	}
	seen := map[drivers.Transport]bool{}
	for _, r := range rep.Runs {
		seen[r.Transport] = true
		if !r.TransportVerified || r.Endpoint.Hop == "" {
			t.Errorf("%s: verified %v, hop's leg %q (%s)", r.Transport, r.TransportVerified, r.Endpoint.Hop, r.Evidence)
		}
	}
	return seen
}
