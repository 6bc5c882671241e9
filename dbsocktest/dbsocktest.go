// Package dbsocktest runs dbsock inside Go tests and benchmarks: Start
// gives a test a server with a TCP and a Unix endpoint, and Benchmark runs
// an operation over both transports, interleaved and verified, as
// sub-benchmarks named transport=tcp and transport=unix, so that
//
//	go test -bench . -count 10 | benchstat -col /transport -
//
// prints a tcp and a unix column. For paired statistics (interleaved
// blocks, an interval, a verdict) use dbsock.Compare.
package dbsocktest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/machinelock"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/userop"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// RequireEnv, set in the environment (to 1; 0 and false do not count),
// makes Start fail a test instead of skipping it when no server can be had:
// a CI job sets it, so that a gate cannot pass having measured nothing.
const RequireEnv = "DBSOCK_REQUIRE_SERVERS"

// Start starts a server of target for tb and stops it in tb.Cleanup. When
// none can be had here (dbsock.ErrUnavailable) the test is skipped, saying
// so and how to make it fail instead, or fails when RequireEnv is set.
func Start(tb testing.TB, target string, opt dbsock.StartOptions) *dbsock.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := dbsock.Start(ctx, target, opt)
	if errors.Is(err, dbsock.ErrUnavailable) && !required() {
		tb.Skipf("%v (skipped, so nothing was measured: set %s=1 to fail instead, as a CI job should)", err, RequireEnv)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Error(err)
		}
	})
	return srv
}

// required says whether RequireEnv asks for servers.
func required() bool {
	v := strings.TrimSpace(os.Getenv(RequireEnv))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// Benchmark runs open's op over srv's TCP and Unix endpoints as the
// sub-benchmarks transport=tcp and transport=unix. Each sub-benchmark
// opens the op over both endpoints, checks that each connection dialed its
// endpoint through dbsock.Dial and that the server sees its transport (it
// fails otherwise), warms both up with 100 untimed ops, and then runs
// b.N ops over each in interleaved blocks (up to 10 block pairs, which of
// a pair goes first alternating), with the benchmark's timer running only
// for its own transport's blocks: both columns are measured over the same
// stretch of time, so that drift on a shared machine moves them alike.
// Each op is timed on its own by dbsock's timing loop; besides ns/op it
// reports the p50 in ns (p50-ns), and the Unix one the p50 speedup of
// its own interleaved blocks (tcp/unix-p50). An op that has not returned
// after 10 s (scenarios.DefaultOpTimeout) fails the sub-benchmark: its
// connections are closed under it. The process is pinned as
// dbsock run pins its client (placement auto) while it runs, and put back
// after. Like dbsock.Compare, it first takes the machine's measuring lock:
// while another measurement on this machine (a benchmark or Compare of
// another package's test binary, a dbsock run) holds it, it waits, saying
// for which process, for at most 10 minutes.
func Benchmark(b *testing.B, srv *dbsock.Server, open dbsock.Opener) {
	b.Helper()
	release, err := machinelock.Acquire(context.Background(), os.Stderr)
	if err != nil {
		b.Fatalf("dbsocktest.Benchmark: %v", err)
	}
	defer release()
	// The client where dbsock run puts it (placement auto), and back after.
	if place, err := placement.Resolve("auto", "", ""); err == nil && len(place.Client) > 0 {
		if restore, err := placement.PinProcess(place.Client); err == nil {
			defer restore()
		}
	}
	for _, t := range []dbsock.Transport{dbsock.TCP, dbsock.Unix} {
		b.Run("transport="+string(t), func(b *testing.B) {
			p50 := interleaved(b, srv, open, t)
			b.ReportMetric(p50[t], "p50-ns")
			if t == dbsock.Unix && p50[dbsock.TCP] > 0 && p50[dbsock.Unix] > 0 {
				b.ReportMetric(p50[dbsock.TCP]/p50[dbsock.Unix], "tcp/unix-p50")
			}
		})
	}
}

// maxBlocks is the most block pairs a sub-benchmark's ops are split into.
const maxBlocks = 10

// opTimeout is how long one op may be in flight before Benchmark gives up
// on the server (a variable for this package's tests).
var opTimeout = scenarios.DefaultOpTimeout

// interleaved runs b.N ops over each of srv's endpoints in interleaved
// blocks, the benchmark's timer running for timed's blocks only, and
// returns each transport's p50 in ns.
func interleaved(b *testing.B, srv *dbsock.Server, open dbsock.Opener, timed dbsock.Transport) map[dbsock.Transport]float64 {
	b.StopTimer()
	ctx := context.Background()
	order := []dbsock.Transport{dbsock.TCP, dbsock.Unix}
	conns := map[dbsock.Transport]drivers.Conn{}
	hist := map[dbsock.Transport]*hdrhistogram.Histogram{}
	server := serverDriver(b, srv)
	for _, t := range order {
		conn, evidence, err := userop.Open(ctx, server, srv.Endpoint(t), open)
		if err != nil {
			b.Fatalf("open over %s: %v", t, err)
		}
		defer conn.Close()
		if b.N == 1 {
			b.Logf("%s: %s", t, evidence) // once, at the first probe
		}
		conns[t], hist[t] = conn, results.NewHistogram()
		if s := watched(b, t, conn, scenarios.LoopConfig{Warmup: 100}, nil, false); s.Err != nil {
			b.Fatalf("warm-up over %s: %v", t, s.Err)
		}
	}
	blocks := min(maxBlocks, b.N)
	b.ResetTimer()
	done := 0
	for i := range blocks {
		n := b.N*(i+1)/blocks - done
		done += n
		pair := order
		if i%2 == 1 {
			pair = []dbsock.Transport{dbsock.Unix, dbsock.TCP}
		}
		for _, t := range pair {
			s := watched(b, t, conns[t], scenarios.LoopConfig{N: n}, hist[t], t == timed)
			if s.Err != nil || s.Errors > 0 {
				b.Fatalf("over %s: %d of %d ops failed: %v", t, s.Errors, s.Ops, s.LastErr)
			}
		}
	}
	return map[dbsock.Transport]float64{
		dbsock.TCP:  float64(hist[dbsock.TCP].ValueAtQuantile(50)),
		dbsock.Unix: float64(hist[dbsock.Unix].ValueAtQuantile(50)),
	}
}

// serverDriver is the driver of srv's target at its defaults: it says
// which path each of the op's connections is on, on the server side.
func serverDriver(b *testing.B, srv *dbsock.Server) drivers.Driver {
	t, ok := targets.Lookup(srv.Target)
	if !ok {
		b.Fatalf("dbsocktest.Benchmark: the %s target is not compiled in", srv.Target)
	}
	return t.Settings().Driver(drivers.Workload{})
}

// watched runs the timing loop cfg over conn (t's), the benchmark's timer
// running when timer, with a watchdog: an op in flight for opTimeout
// aborts conn, and the benchmark fails saying that the server did not
// answer.
func watched(b *testing.B, t dbsock.Transport, conn drivers.Conn, cfg scenarios.LoopConfig, h *hdrhistogram.Histogram, timer bool) scenarios.Sample {
	var hb scenarios.Heartbeat
	cfg.Heartbeat = &hb
	abort := conn.Close
	if a, ok := conn.(drivers.Aborter); ok {
		abort = a.Abort // Close may wait for the op in flight
	}
	dog := scenarios.StartWatchdog(closer(abort), &hb, opTimeout)
	if timer {
		b.StartTimer()
	}
	s := scenarios.Loop(context.Background(), conn, cfg, h, nil)
	if timer {
		b.StopTimer()
	}
	if dog.Done() {
		b.Fatalf("over %s: %v for %s, so dbsock gave up on the connection after %d ops: %v", t, scenarios.ErrNoAnswer, opTimeout, s.Ops, s.LastErr)
	}
	return s
}

// closer adapts a function to io.Closer.
type closer func() error

func (f closer) Close() error { return f() }
