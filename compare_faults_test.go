package dbsock_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockredis"
)

// faultOptions are small runs with a short op timeout.
var faultOptions = dbsock.CompareOptions{N: 300, Warmup: 10, Instances: 1, Rounds: 1, Blocks: 2, Seed: 1, OpTimeout: 2 * time.Second}

// redisOp is a PING through go-redis with dbsock's options; after calls
// ops, each op instead does what then says.
func redisOp(after int, then func(ctx context.Context) error) dbsock.Opener {
	return func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		c := redis.NewClient(dbsockredis.Options(ep))
		n := 0
		return func(ctx context.Context) error {
			n++
			if after > 0 && n > after {
				return then(ctx)
			}
			return c.Ping(ctx).Err()
		}, c.Close, nil
	}
}

// withinLimit fails the test when Compare took more than the op timeout
// plus 2 s (and a second of slack for a shared machine) from since.
func withinLimit(t *testing.T, what string, since time.Time, limit time.Duration) {
	t.Helper()
	took := time.Since(since)
	t.Logf("%s: Compare returned %v after the fault", what, took.Round(time.Millisecond))
	if took > limit+3*time.Second {
		t.Errorf("%s: Compare returned %v after the fault, more than %v + 2 s", what, took, limit)
	}
}

func compareErr(t *testing.T, ctx context.Context, srv *dbsock.Server, op dbsock.Opener, opt dbsock.CompareOptions) error {
	t.Helper()
	_, err := dbsock.Compare(ctx, srv, "fault", op, opt)
	if err == nil {
		t.Fatal("Compare succeeded, want an error")
	}
	return err
}

// TestCompareGivesUpOnAStoppedServer: the README's database/sql pattern
// against a server that is SIGSTOPped mid-run: Compare returns within
// OpTimeout + 2 s (the op's context ends and its sockets are closed),
// saying the server did not answer.
func TestCompareGivesUpOnAStoppedServer(t *testing.T) {
	srv := startServer(t, "mysql", dbsock.StartOptions{})
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(srv.Origin)
	if m == nil {
		t.Fatalf("no pid in %q", srv.Origin)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	var stopped time.Time
	inner := queryOp("SELECT ?", func(i int) any { return i })
	calls := 0
	op := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		do, closer, err := inner(ctx, ep)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context) error {
			if calls++; calls == 200 {
				syscall.Kill(pid, syscall.SIGSTOP)
				stopped = time.Now()
			}
			return do(ctx)
		}, closer, nil
	}
	err := compareErr(t, context.Background(), srv, op, faultOptions)
	withinLimit(t, "stopped server", stopped, faultOptions.OpTimeout)
	if !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("error %q does not say the server did not answer", err)
	}
}

// TestCompareFaultsOfYourOp: an op that waits on its context, a caller
// whose context ends, an op that panics, an Opener that returns nothing,
// and a close that blocks: each ends Compare with an error that says so,
// in time, and the process lives on; a close that blocks is left behind
// after 2 s.
func TestCompareFaultsOfYourOp(t *testing.T) {
	srv := startServer(t, "redis", dbsock.StartOptions{})
	t.Run("waits on its context", func(t *testing.T) {
		var since time.Time
		op := redisOp(100, func(ctx context.Context) error {
			if since.IsZero() {
				since = time.Now()
			}
			<-ctx.Done()
			return ctx.Err()
		})
		compareErr(t, context.Background(), srv, op, faultOptions)
		withinLimit(t, "op waits on ctx", since, faultOptions.OpTimeout)
	})
	t.Run("the caller's context ends", func(t *testing.T) {
		opt := faultOptions
		opt.OpTimeout = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		op := redisOp(100, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		compareErr(t, ctx, srv, op, opt)
		withinLimit(t, "caller's ctx", start, 3*time.Second)
	})
	t.Run("panics", func(t *testing.T) {
		err := compareErr(t, context.Background(), srv, redisOp(50, func(context.Context) error { panic("boom") }), faultOptions)
		if !strings.Contains(err.Error(), "panicked: boom") {
			t.Errorf("error %q does not say the op panicked", err)
		}
	})
	t.Run("opener returns nothing", func(t *testing.T) {
		nothing := func(context.Context, dbsock.Endpoint) (func(context.Context) error, func() error, error) {
			return nil, nil, nil
		}
		err := compareErr(t, context.Background(), srv, nothing, faultOptions)
		if !strings.Contains(err.Error(), "returned no op") {
			t.Errorf("error %q does not say the Opener returned no op", err)
		}
	})
	t.Run("close blocks", func(t *testing.T) {
		op := func(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
			do, _, err := redisOp(0, nil)(ctx, ep)
			return do, func() error { select {} }, err
		}
		// Each close is given up on after 2 s: the run goes on and ends.
		start := time.Now()
		_, err := dbsock.Compare(context.Background(), srv, "fault", op, faultOptions)
		took := time.Since(start)
		t.Logf("with a close that blocks: %v after %v", err, took.Round(time.Millisecond))
		if err != nil || took > time.Minute {
			t.Errorf("with a close that blocks: %v after %v; want the run to end", err, took)
		}
	})
}

// TestCompareChecksYourOpsOwnDial: an op that only sleeps while another
// goroutine of the process dials the same server through dbsock's options
// is not verified: only what the Opener's own endpoint dialed counts.
func TestCompareChecksYourOpsOwnDial(t *testing.T) {
	srv := startServer(t, "redis", dbsock.StartOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ep := range []dbsock.Endpoint{srv.TCP, srv.Unix} {
		go func(ep dbsock.Endpoint) {
			for ctx.Err() == nil {
				c := redis.NewClient(dbsockredis.Options(ep))
				c.Ping(ctx)
				c.Close()
				time.Sleep(time.Millisecond)
			}
		}(ep)
	}
	sleeper := func(context.Context, dbsock.Endpoint) (func(context.Context) error, func() error, error) {
		return func(context.Context) error { time.Sleep(20 * time.Microsecond); return nil }, nil, nil
	}
	err := compareErr(t, context.Background(), srv, sleeper, faultOptions)
	if !strings.Contains(err.Error(), "made no connection") {
		t.Errorf("error %q does not say the op made no connection of its own", err)
	}
}
