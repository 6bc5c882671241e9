package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// hangConn answers ops normally until hangAfter, then blocks until closed,
// like a server that stopped answering.
type hangConn struct {
	mu        sync.Mutex
	calls     int
	hangAfter int
	closed    chan struct{}
	once      sync.Once
	transport drivers.Transport
}

func newHangConn(t drivers.Transport, hangAfter int) *hangConn {
	return &hangConn{hangAfter: hangAfter, closed: make(chan struct{}), transport: t}
}

func (c *hangConn) Do(context.Context) error {
	c.mu.Lock()
	c.calls++
	n := c.calls
	c.mu.Unlock()
	if n > c.hangAfter {
		<-c.closed
		return errors.New("use of closed connection")
	}
	return nil
}

func (c *hangConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{Transport: c.transport}, nil
}

func (c *hangConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// hangDriver serves one hangConn per transport.
type hangDriver struct{ tcp, unix *hangConn }

func (d hangDriver) Name() string                                 { return "hang" }
func (d hangDriver) Mode() string                                 { return "" }
func (d hangDriver) ValueSize() int                               { return 0 }
func (d hangDriver) ConnectPhase() string                         { return "" }
func (d hangDriver) Describe() string                             { return "hangs" }
func (d hangDriver) Seed(context.Context, drivers.Endpoint) error { return nil }
func (d hangDriver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{}, nil
}
func (d hangDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	if ep.Transport == drivers.Unix {
		return d.unix, nil
	}
	return d.tcp, nil
}

var hangPair = drivers.Pair{TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
	Unix: drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/hang.sock"}}

// pk is a case of the pk scenario with settings s.
func pk(s Settings) caseRun { return caseRun{Settings: s, Case: Case{Scenario: PK}} }

func round(t *testing.T, d drivers.Driver, opt caseRun) ([]results.Run, error) {
	t.Helper()
	return measureRound(context.Background(), d, hangPair.Paths(), opt, 1, rand.New(rand.NewPCG(1, 2)), nil)
}

func TestWatchdogUnblocksAHungServer(t *testing.T) {
	d := hangDriver{tcp: newHangConn(drivers.TCP, 500), unix: newHangConn(drivers.Unix, 1<<30)}
	start := time.Now()
	runs, err := round(t, d, pk(Settings{N: 1000, Warmup: 100, OpTimeout: 200 * time.Millisecond}))
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the round took %s with a 200ms op timeout", took)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer for 200ms (Plan.Loop.OpTimeout)") {
		t.Fatalf("err = %v, want the op timeout named", err)
	}
	if len(runs) != 2 || runs[0].Transport != drivers.TCP {
		t.Fatalf("got %d runs, want TCP's and Unix's", len(runs))
	}
	run := runs[0]
	if !run.Incomplete || run.N < 400 || run.N > 420 {
		t.Fatalf("run = incomplete %v, n %d; want the 400 good ops and a few failures kept", run.Incomplete, run.N)
	}
	if !runs[1].Incomplete || !strings.Contains(runs[1].Error, "round stopped early") {
		t.Fatalf("Unix run = incomplete %v, error %q; want it marked as stopped with the round", runs[1].Incomplete, runs[1].Error)
	}
}

func TestWatchdogQuietWhileOpsFlow(t *testing.T) {
	d := hangDriver{tcp: newHangConn(drivers.TCP, 1<<30), unix: newHangConn(drivers.Unix, 1<<30)}
	// Each transport's blocks are idle while the other's run: the watchdog
	// must not count that as a hung server.
	_, err := round(t, d, pk(Settings{N: 200000, Blocks: 4, Warmup: 10, OpTimeout: 50 * time.Millisecond}))
	if err != nil {
		t.Fatalf("a healthy run failed: %v", err)
	}
}

// timeoutConn's Verify fails as a client library's own I/O deadline does.
type timeoutConn struct{ hangConn }

func (c *timeoutConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{}, fmt.Errorf("stats conns: read tcp 127.0.0.1:1: %w", os.ErrDeadlineExceeded)
}

// A server that stops answering while dbsock verifies the transport (the
// library's own deadline fires first) is said not to have answered.
func TestVerifyTimeoutSaysTheServerDidNotAnswer(t *testing.T) {
	conn := &timeoutConn{*newHangConn(drivers.TCP, 1<<30)}
	d := verifyDriver{hangDriver{tcp: newHangConn(drivers.TCP, 1<<30), unix: newHangConn(drivers.Unix, 1<<30)}, conn}
	_, err := round(t, d, pk(Settings{N: 10, Warmup: 1, OpTimeout: 200 * time.Millisecond}))
	if err == nil || !strings.Contains(err.Error(), "did not answer within 200ms (Plan.Loop.OpTimeout) while dbsock verified the transport") {
		t.Fatalf("err = %v, want the server named as not answering", err)
	}
}

// verifyDriver is hangDriver whose TCP connection is conn.
type verifyDriver struct {
	hangDriver
	conn drivers.Conn
}

func (d verifyDriver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	if ep.Transport == drivers.TCP {
		return d.conn, nil
	}
	return d.hangDriver.Open(ctx, ep)
}

// lateConn answers every op after delay: a server that is slow, not hung.
type lateConn struct {
	hangConn
	delay time.Duration
}

func (c *lateConn) Do(context.Context) error {
	select {
	case <-time.After(c.delay):
		return nil
	case <-c.closed:
		return errors.New("use of closed connection")
	}
}

// lateDriver serves one lateConn per transport.
type lateDriver struct {
	hangDriver
	tcp, unix *lateConn
}

func (d lateDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	if ep.Transport == drivers.Unix {
		return d.unix, nil
	}
	return d.tcp, nil
}

func newLateDriver(delay time.Duration) lateDriver {
	return lateDriver{tcp: &lateConn{*newHangConn(drivers.TCP, 1<<30), delay}, unix: &lateConn{*newHangConn(drivers.Unix, 1<<30), delay}}
}

// The watchdog watches each op: ops that each answer well within the op
// timeout never make it fire, however many of them together take longer
// than the timeout, and neither does a paced loop's wait between ops
// longer than the timeout. An op that never answers still fails the
// round within the timeout and a little more.
func TestWatchdogWatchesEachOp(t *testing.T) {
	// Wide margins: every op of a healthy server answers with most of the
	// timeout to spare, so a busy machine's scheduling delays cannot make
	// the watchdog fire; the old beat every 16th op fired on all of them.
	const timeout = 250 * time.Millisecond
	tests := []struct {
		name string
		d    drivers.Driver
		opt  caseRun
		hung bool
	}{
		{"ops of a tenth of the timeout", newLateDriver(timeout / 10), pk(Settings{N: 12, Blocks: 1, Warmup: 6, OpTimeout: timeout}), false},
		{"paced, 400ms between ops", newLateDriver(time.Millisecond), pk(Settings{N: 3, Blocks: 1, Rate: 1 / 0.4, OpTimeout: timeout}), false},
		{"an op that never answers", hangDriver{tcp: newHangConn(drivers.TCP, 3), unix: newHangConn(drivers.Unix, 1<<30)},
			pk(Settings{N: 10, Blocks: 1, OpTimeout: timeout}), true},
		{"paced, then an op that never answers", hangDriver{tcp: newHangConn(drivers.TCP, 3), unix: newHangConn(drivers.Unix, 1<<30)},
			pk(Settings{N: 10, Blocks: 1, Rate: 1 / 0.3, OpTimeout: timeout}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			runs, err := round(t, tt.d, tt.opt)
			took := time.Since(start)
			if !tt.hung {
				if err != nil {
					t.Fatalf("a server that answers every op within %s failed the round after %s: %v", timeout, took, err)
				}
				if len(runs) != 2 || runs[0].N != int64(tt.opt.N) || runs[1].N != int64(tt.opt.N) {
					t.Fatalf("runs %+v, want both transports with %d ops", runs, tt.opt.N)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "did not answer for 250ms") {
				t.Fatalf("err = %v, want the server said not to have answered for 250ms", err)
			}
			// The three ops before the hang take about a second paced; the
			// watchdog fires within a timeout and an eighth of one, and
			// the paced loop does not wait out its schedule after that.
			if took > 3*time.Second {
				t.Fatalf("the round ended %s after it started, with a %s op timeout", took, timeout)
			}
		})
	}
}

// sleepOp takes at least d per op.
type sleepOp time.Duration

func (d sleepOp) Do(context.Context) error { time.Sleep(time.Duration(d)); return nil }

// TestHeartbeatBeatsForEachSlowOp: the loop beats before every op that
// follows one slower than QuickOp, and before every 16th op of quick ones
// (their atomic store shared), and rests after the loop.
func TestHeartbeatBeatsForEachSlowOp(t *testing.T) {
	tests := []struct {
		name        string
		op          Op
		n           int
		least, most int64 // beats
	}{
		// A quick op the scheduler holds up past QuickOp beats for the
		// next: a few more than one per 16, never one per op.
		{"1600 quick ops", nopConn{}, 1600, 100, 199},
		{"10 slow ops", sleepOp(2 * QuickOp), 10, 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hb Heartbeat
			Loop(context.Background(), tt.op, LoopConfig{N: tt.n, Heartbeat: &hb}, results.NewHistogram(), nil)
			if v := hb.v.Load(); v%2 != 0 || v/2 < tt.least || v/2 > tt.most {
				t.Errorf("heartbeat %d: %d beats and at rest %v; want %d to %d beats, at rest", v, v/2, v%2 == 0, tt.least, tt.most)
			}
		})
	}
}
