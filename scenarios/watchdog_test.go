package scenarios

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// hangConn answers ops normally until hangAfter, then blocks until closed,
// like a server that stopped answering.
type hangConn struct {
	mu        sync.Mutex
	calls     int
	hangAfter int
	closed    chan struct{}
	once      sync.Once
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
	return drivers.Verification{Transport: drivers.TCP}, nil
}

func (c *hangConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

type hangDriver struct{ conn *hangConn }

func (d hangDriver) Name() string                                 { return "hang" }
func (d hangDriver) Mode() string                                 { return "" }
func (d hangDriver) ValueSize() int                               { return 0 }
func (d hangDriver) ConnectPhase() string                         { return "" }
func (d hangDriver) Describe() string                             { return "hangs" }
func (d hangDriver) Seed(context.Context, drivers.Endpoint) error { return nil }
func (d hangDriver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{}, nil
}
func (d hangDriver) Open(context.Context, drivers.Endpoint) (drivers.Conn, error) { return d.conn, nil }

func TestWatchdogUnblocksAHungServer(t *testing.T) {
	d := hangDriver{conn: &hangConn{hangAfter: 500, closed: make(chan struct{})}}
	start := time.Now()
	run, err := measure(context.Background(), d, drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
		Options{Scenario: PK, N: 1000, Warmup: 100, OpTimeout: 200 * time.Millisecond})
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("measure took %s with a 200ms op timeout", took)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer for 200ms (--op-timeout)") {
		t.Fatalf("err = %v, want the op timeout named", err)
	}
	if !run.Incomplete || run.N < 400 || run.N > 420 {
		t.Fatalf("run = incomplete %v, n %d; want the 400 good ops and a few failures kept", run.Incomplete, run.N)
	}
}

func TestWatchdogQuietWhileOpsFlow(t *testing.T) {
	d := hangDriver{conn: &hangConn{hangAfter: 1 << 30, closed: make(chan struct{})}}
	_, err := measure(context.Background(), d, drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
		Options{Scenario: PK, N: 200000, Warmup: 10, OpTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("a healthy run failed: %v", err)
	}
}
