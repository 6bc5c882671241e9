// Package dbsocktest runs dbsock inside Go tests and benchmarks: Start
// gives a test a server with a TCP and a Unix endpoint, and Benchmark runs
// an operation over both transports as sub-benchmarks named
// transport=tcp and transport=unix, so that
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
	"testing"
	"time"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
)

// RequireEnv, when set in the environment, makes Start fail a test instead
// of skipping it when no server can be had (as CI wants).
const RequireEnv = "DBSOCK_REQUIRE_SERVERS"

// Start starts a server of target for tb and stops it in tb.Cleanup. When
// none can be had here (dbsock.ErrUnavailable) the test is skipped, or
// fails when RequireEnv is set.
func Start(tb testing.TB, target string, opt dbsock.StartOptions) *dbsock.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := dbsock.Start(ctx, target, opt)
	if errors.Is(err, dbsock.ErrUnavailable) && os.Getenv(RequireEnv) == "" {
		tb.Skip(err)
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

// Benchmark runs open's op over srv's TCP endpoint, then its Unix endpoint,
// as the sub-benchmarks transport=tcp and transport=unix: each op timed on
// its own by dbsock's timing loop after 100 untimed ones, with ns/op and
// the p50 in ns (p50-ns); the Unix one also reports the p50 speedup over
// the last TCP run (tcp/unix-p50). The process is pinned as dbsock run
// pins its client (placement auto) while it runs.
func Benchmark(b *testing.B, srv *dbsock.Server, open dbsock.Opener) {
	b.Helper()
	// The client where dbsock run puts it (placement auto), and back after.
	if place, err := placement.Resolve("auto", "", ""); err == nil && len(place.Client) > 0 {
		if restore, err := placement.PinProcess(place.Client); err == nil {
			defer restore()
		}
	}
	var tcpP50 float64
	for _, t := range []dbsock.Transport{dbsock.TCP, dbsock.Unix} {
		b.Run("transport="+string(t), func(b *testing.B) {
			p50 := run(b, srv.Endpoint(t), open)
			b.ReportMetric(p50, "p50-ns")
			if t == dbsock.TCP {
				tcpP50 = p50
			} else if tcpP50 > 0 && p50 > 0 {
				b.ReportMetric(tcpP50/p50, "tcp/unix-p50")
			}
		})
	}
}

// op adapts a function to the timing loop.
type op func(context.Context) error

func (f op) Do(ctx context.Context) error { return f(ctx) }

// run times b.N ops over ep and returns their p50 in ns.
func run(b *testing.B, ep dbsock.Endpoint, open dbsock.Opener) float64 {
	ctx := context.Background()
	do, closer, err := open(ctx, ep)
	if err != nil {
		b.Fatalf("open over %s: %v", ep, err)
	}
	if closer != nil {
		defer closer()
	}
	h := results.NewHistogram()
	if s := scenarios.Loop(ctx, op(do), scenarios.LoopConfig{Warmup: 100}, nil, nil); s.Err != nil {
		b.Fatalf("warm-up over %s: %v", ep, s.Err)
	}
	b.ResetTimer()
	s := scenarios.Loop(ctx, op(do), scenarios.LoopConfig{N: b.N}, h, nil)
	b.StopTimer()
	if s.Err != nil || s.Errors > 0 {
		b.Fatalf("over %s: %d of %d ops failed: %v", ep, s.Errors, s.Ops, s.LastErr)
	}
	return float64(h.ValueAtQuantile(50))
}
