package dbsocktest

import (
	"context"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockredis"
)

// TestBenchmarkInterleavesAndVerifies: a sub-benchmark measures both
// transports over the same stretch (each histogram holds b.N ops) with
// the timer on its own transport's blocks; an op that dials the TCP
// endpoint whatever it is given fails verification instead of being
// reported as Unix.
func TestBenchmarkInterleavesAndVerifies(t *testing.T) {
	srv := Start(t, "redis", dbsock.StartOptions{})
	ping := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		c := redis.NewClient(dbsockredis.Options(ep))
		return func(ctx context.Context) error { return c.Ping(ctx).Err() }, c.Close, nil
	}
	var p50 map[dbsock.Transport]float64
	r := testing.Benchmark(func(b *testing.B) { p50 = interleaved(b, srv, ping, dbsock.Unix) })
	if r.N == 0 || p50[dbsock.TCP] <= 0 || p50[dbsock.Unix] <= 0 {
		t.Fatalf("result %v, p50s %v: want both transports measured", r, p50)
	}
	t.Logf("%d ops each: TCP p50 %.0f ns, Unix p50 %.0f ns, %s", r.N, p50[dbsock.TCP], p50[dbsock.Unix], r)

	wrong := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		return ping(ctx, srv.TCP) // not the endpoint it was given
	}
	p50 = nil
	if r := testing.Benchmark(func(b *testing.B) { p50 = interleaved(b, srv, wrong, dbsock.Unix) }); r.N != 0 || p50 != nil {
		t.Errorf("an op that ignores its endpoint was measured: %v", r)
	}
}

// TestBenchmarkGivesUpOnAStoppedServer: a server stopped (SIGSTOP) in the
// middle of a benchmark fails it within the op timeout and a little more,
// instead of holding it until go test's own timeout.
func TestBenchmarkGivesUpOnAStoppedServer(t *testing.T) {
	srv := Start(t, "redis", dbsock.StartOptions{})
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(srv.Origin)
	if m == nil {
		t.Fatalf("no pid in %q", srv.Origin)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	old := opTimeout
	opTimeout = time.Second
	t.Cleanup(func() { opTimeout = old })
	var stopped time.Time
	calls := 0
	ping := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		c := redis.NewClient(dbsockredis.Options(ep))
		return func(ctx context.Context) error {
			if calls++; calls == 1000 {
				syscall.Kill(pid, syscall.SIGSTOP)
				stopped = time.Now()
			}
			return c.Ping(ctx).Err()
		}, c.Close, nil
	}
	r := testing.Benchmark(func(b *testing.B) { interleaved(b, srv, ping, dbsock.Unix) })
	if stopped.IsZero() {
		t.Fatalf("the server was never stopped (%d ops): %v", calls, r)
	}
	took := time.Since(stopped)
	t.Logf("the benchmark ended %s after the server was stopped", took.Round(time.Millisecond))
	if r.N != 0 {
		t.Errorf("a benchmark against a stopped server succeeded: %v", r)
	}
	if took > opTimeout+2*time.Second {
		t.Errorf("the benchmark ended %s after the server was stopped, want within the op timeout %s and 2 s", took.Round(time.Millisecond), opTimeout)
	}
}
