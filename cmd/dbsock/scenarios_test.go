package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/results"
)

// runJSON runs dbsock with args plus JSON output and returns the report.
func runJSON(t *testing.T, args ...string) *results.Report {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := dbsock(t, append(args, "-q", "--out", out)...)
	if code != 0 {
		t.Fatalf("dbsock %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func needAllServers(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "mongod", "ferretdb")
}

// summaryOf finds the summary of one target and scenario.
func summaryOf(t *testing.T, r *results.Report, target, scenario string) results.Summary {
	t.Helper()
	for _, s := range r.Summary {
		if s.Target == target && s.Scenario == scenario {
			return s
		}
	}
	t.Fatalf("no summary for %s %s", target, scenario)
	return results.Summary{}
}

// TestConnectAndPKEveryTarget runs both scenarios over both transports
// against every real server and checks what must hold: a new connection per
// op costs more than a lookup on a kept one, and the connect phase and the
// query phase are timed apart and fit inside the whole op.
func TestConnectAndPKEveryTarget(t *testing.T) {
	needAllServers(t)
	r := runJSON(t, "run", "all", "echo", "--scenario", "pk,connect", "--n", "150", "--warmup", "10", "--instances", "1", "--rounds", "1", "--provider", "local")
	for _, target := range []string{"mysql", "redis", "mongo", "echo"} {
		pk, conn := summaryOf(t, r, target, "pk"), summaryOf(t, r, target, "connect")
		for _, tr := range drivers.Transports {
			pkSide, connSide := pk.Side(drivers.TCP), conn.Side(drivers.TCP)
			if tr == drivers.Unix {
				pkSide, connSide = pk.Side(drivers.Unix), conn.Side(drivers.Unix)
			}
			if pkSide.N != 150 || connSide.N != 150 || pkSide.Errors+connSide.Errors != 0 {
				t.Errorf("%s %s: n pk %d connect %d, errors %d", target, tr, pkSide.N, connSide.N, pkSide.Errors+connSide.Errors)
			}
			if connSide.Latency.P50 <= pkSide.Latency.P50 {
				t.Errorf("%s %s: connect p50 %d ns is not above pk p50 %d ns", target, tr, connSide.Latency.P50, pkSide.Latency.P50)
			}
			c, q := connSide.Phases["connect"], connSide.Phases["query"]
			if c.P50 <= 0 || q.P50 <= 0 || c.Mean+q.Mean > connSide.Latency.Mean*1.01 {
				t.Errorf("%s %s: phases connect %+v query %+v do not fit in the whole op %+v", target, tr, c, q, connSide.Latency)
			}
		}
	}
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Concurrency != 1 || run.ValueSize <= 0 || run.Rate != 0 {
			t.Errorf("%s %s %s: case %+v verified %v", run.Target, run.Scenario, run.Transport, run.Case, run.TransportVerified)
		}
	}
}

// TestConcurrencySharesN checks that C workers share the N ops of a
// transport and round, each on its own connection, for a database and
// for echo, and that ops/s counts them all; an N that leaves a worker no
// op in a block is refused before anything starts.
func TestConcurrencySharesN(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	code, _, stderr := dbsock(t, "run", "echo", "--provider", "local", "--concurrency", "16", "--n", "100")
	if code != 2 || !strings.Contains(stderr, "--n 100 is split among the --concurrency 16 workers in each of 10 blocks, which leaves some worker no op: raise --n to at least 160") {
		t.Errorf("--n 100 over 16 workers: exit %d, %s", code, stderr)
	}
	r := runJSON(t, "run", "redis", "echo", "--provider", "local", "--concurrency", "1,4", "--n", "200", "--warmup", "5", "--instances", "1", "--rounds", "1")
	for _, run := range r.Runs {
		if want := int64(200); run.N != want || run.Errors != 0 {
			t.Errorf("%s c=%d %s: n %d errors %d, want %d ops", run.Target, run.Concurrency, run.Transport, run.N, run.Errors, want)
		}
		if run.OpsPerSec <= 0 || run.ElapsedNs <= 0 {
			t.Errorf("%s c=%d: ops/s %v", run.Target, run.Concurrency, run.OpsPerSec)
		}
	}
	if len(r.Summary) != 4 {
		t.Fatalf("%d summaries, want 2 targets x 2 concurrencies", len(r.Summary))
	}
}

// TestValueSizesEveryTarget reads a 16-byte and a 64 KiB value from every
// real server; the drivers check each value's length on every op. 100
// rows: 10,000 (the default) of 64 KiB had each server seeded with 640 MiB.
func TestValueSizesEveryTarget(t *testing.T) {
	needAllServers(t)
	r := runJSON(t, "run", "all", "echo", "--value-size", "16,64KiB", "--rows", "100", "--n", "50", "--warmup", "5", "--instances", "1", "--rounds", "1", "--provider", "local")
	seen := map[string]bool{}
	for _, run := range r.Runs {
		if run.Errors != 0 || run.N != 50 {
			t.Errorf("%s %d B %s: n %d errors %d (%s)", run.Target, run.ValueSize, run.Transport, run.N, run.Errors, run.Error)
		}
		seen[run.Target+"/"+results.FormatSize(run.ValueSize)] = true
	}
	for _, target := range []string{"mysql", "redis", "mongo", "echo"} {
		for _, size := range []string{"16 B", "64 KiB"} {
			if !seen[target+"/"+size] {
				t.Errorf("no run of %s with %s values", target, size)
			}
		}
	}
}

// TestRateHoldsOnEcho checks that open-loop mode keeps its schedule: the
// achieved rate is within 10% of the one asked for, and both the corrected
// and the uncorrected latencies are recorded.
func TestRateHoldsOnEcho(t *testing.T) {
	r := runJSON(t, "run", "echo", "--rate", "2000", "--n", "1000", "--warmup", "10", "--instances", "1", "--rounds", "1")
	for _, run := range r.Runs {
		if run.Rate != 2000 || run.Errors != 0 {
			t.Fatalf("%s: rate %v errors %d", run.Transport, run.Rate, run.Errors)
		}
		// The open loop never runs ahead of its schedule; how close it
		// keeps to it is a timing check, for a quiet machine alone
		// (scripts/stability.sh sets DBSOCK_TIMING).
		if run.OpsPerSec > 2200 {
			t.Errorf("%s: achieved %.0f ops/s, ahead of 2000 by more than 10%%", run.Transport, run.OpsPerSec)
		}
		if os.Getenv("DBSOCK_TIMING") != "" && run.OpsPerSec < 1800 {
			t.Errorf("%s: achieved %.0f ops/s, want 2000 ± 10%%", run.Transport, run.OpsPerSec)
		}
		u, ok := run.Phases["uncorrected"]
		if !ok || u.Latency.P50 <= 0 || u.Latency.P50 > run.Latency.P50*2 {
			t.Errorf("%s: uncorrected %+v against corrected %+v", run.Transport, u.Latency, run.Latency)
		}
	}
}

// TestDurationInsteadOfN runs for a time instead of a count.
func TestDurationInsteadOfN(t *testing.T) {
	r := runJSON(t, "run", "echo", "--duration", "200ms", "--warmup", "10", "--instances", "1", "--rounds", "1")
	if r.Config.DurationNs != int64(200*time.Millisecond) {
		t.Fatalf("config duration %d", r.Config.DurationNs)
	}
	for _, run := range r.Runs {
		if el := time.Duration(run.ElapsedNs); el < 200*time.Millisecond || el > 2*time.Second || run.N < 100 {
			t.Errorf("%s: ran %s, %d ops", run.Transport, el, run.N)
		}
	}
}

// TestDriverModesRecorded runs the round-trip-changing driver settings and
// checks each run records its mode.
func TestDriverModesRecorded(t *testing.T) {
	needAllServers(t)
	r := runJSON(t, "run", "all", "--n", "50", "--warmup", "5", "--instances", "1", "--rounds", "1", "--provider", "local",
		"--mysql-mode", "default", "--redis-protocol", "2", "--redis-identity", "--mongo-op", "ping")
	want := map[string]string{"mysql": "default", "redis": "resp2+identity", "mongo": "ping"}
	for _, run := range r.Runs {
		if run.Mode != want[run.Target] || run.Errors != 0 || !run.TransportVerified {
			t.Errorf("%s %s: mode %q (want %q), errors %d", run.Target, run.Transport, run.Mode, want[run.Target], run.Errors)
		}
	}
	r = runJSON(t, "run", "mysql", "--n", "50", "--warmup", "5", "--instances", "1", "--rounds", "1", "--provider", "local", "--mysql-mode", "interpolate")
	if r.Runs[0].Mode != "interpolate" || r.Runs[0].Errors != 0 {
		t.Errorf("interpolate: %+v", r.Runs[0].Case)
	}
}

// TestConcurrency256EveryTarget runs 256 workers per transport against
// every real server: the run completes and reports, it does not crash.
func TestConcurrency256EveryTarget(t *testing.T) {
	needAllServers(t)
	r := runJSON(t, "run", "all", "echo", "--concurrency", "256", "--n", "5120", "--warmup", "2", "--instances", "1", "--rounds", "1", "--provider", "local")
	for _, s := range r.Summary {
		for _, side := range []results.Side{s.Side(drivers.TCP), s.Side(drivers.Unix)} {
			if side.N != 5120 {
				t.Errorf("%s: %d ops, want %d", s.Target, side.N, 5120)
			}
			if side.Errors != 0 {
				t.Logf("%s: %d errors (%.2f%%) at 256 workers", s.Target, side.Errors, 100*side.ErrorRate)
			}
		}
	}
}

// TestGRPCAndHTTPTargets runs the gRPC health check and HTTP GET targets in
// both scenarios over both transports, each verified by the server.
func TestGRPCAndHTTPTargets(t *testing.T) {
	r := runJSON(t, "run", "grpc", "http", "--scenario", "pk,connect", "--n", "200", "--warmup", "20", "--instances", "1", "--rounds", "1")
	if len(r.Runs) != 2*2*2 {
		t.Fatalf("%d runs, want 2 targets x 2 scenarios x 2 transports", len(r.Runs))
	}
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Errors != 0 || run.N != 200 || !strings.Contains(run.Evidence, "accepted the ") ||
			!strings.HasSuffix(run.Evidence, string(run.Transport)) {
			t.Errorf("%s %s %s: verified %v (%s) errors %d n %d", run.Target, run.Scenario, run.Transport, run.TransportVerified, run.Evidence, run.Errors, run.N)
		}
	}
	for _, target := range []string{"grpc", "http"} {
		pk, conn := summaryOf(t, r, target, "pk"), summaryOf(t, r, target, "connect")
		if conn.Side(drivers.TCP).Latency.P50 <= pk.Side(drivers.TCP).Latency.P50 || conn.Side(drivers.Unix).Latency.P50 <= pk.Side(drivers.Unix).Latency.P50 {
			t.Errorf("%s: a new connection per call is not slower than a kept one", target)
		}
	}
	code, out, _ := dbsock(t, "targets")
	for _, want := range []string{"mysql", "redis", "mongo", "echo", "grpc", "http", "all"} {
		if code != 0 || !strings.Contains(out, "\n"+want+" ") {
			t.Errorf("dbsock targets does not list %s:\n%s", want, out)
		}
	}
}

// TestPostgresLocalAndExternal measures a real PostgreSQL in both scenarios
// through the local provider, then the same server through the external
// provider's flags.
func TestPostgresLocalAndExternal(t *testing.T) {
	testutil.NeedAny(t, "initdb")
	r := runJSON(t, "run", "postgres", "--provider", "local", "--scenario", "pk,connect", "--n", "150", "--warmup", "10", "--instances", "1", "--rounds", "1")
	if r.Targets[0].Server.Product != "PostgreSQL" || r.Targets[0].Error != "" {
		t.Fatalf("target %+v", r.Targets[0])
	}
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Errors != 0 || run.N != 150 {
			t.Errorf("%s %s: verified %v (%s) errors %d", run.Scenario, run.Transport, run.TransportVerified, run.Evidence, run.Errors)
		}
	}
	pk, conn := summaryOf(t, r, "postgres", "pk"), summaryOf(t, r, "postgres", "connect")
	if conn.Side(drivers.Unix).Latency.P50 <= pk.Side(drivers.Unix).Latency.P50 {
		t.Errorf("a new connection per op is not slower than a kept one")
	}
	srv := startLocal(t, "postgres")
	t.Setenv("DBSOCK_POSTGRES_PASSWORD", srv.TCP().Password)
	r = runJSON(t, "run", "postgres", "--provider", "external", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1",
		"--postgres-addr", srv.TCP().Address, "--postgres-socket-dir", filepath.Dir(srv.Unix().Address), "--postgres-user", srv.TCP().User)
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Errors != 0 {
			t.Errorf("external %s: verified %v errors %d", run.Transport, run.TransportVerified, run.Errors)
		}
	}
}
