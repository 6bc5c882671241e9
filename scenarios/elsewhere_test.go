package scenarios

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// timerConn is a unit-test double of a connection whose ops are timed
// elsewhere (an agent's): every op takes latency ns by its own clock, and
// the ops whose overall index fail() names fail. It counts what the loop
// asked of it.
type timerConn struct {
	transportConn
	latency   int64
	fail      func(i int) bool
	keys      []int64
	blocks    []int // the n of each TimeBlock
	ops       int   // ops done through TimeBlock
	direct    int   // ops done through Do or DoKey: the loop timing them itself
	brokenErr error // TimeBlock fails with it, when set
}

func (c *timerConn) UseKeys(ids []int64)                    { c.keys = append(c.keys[:0], ids...) }
func (c *timerConn) Do(context.Context) error               { c.direct++; return nil }
func (c *timerConn) DoKey(context.Context, int, bool) error { c.direct++; return nil }
func (c *timerConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{Transport: c.t, Evidence: "as the test says"}, nil
}

func (c *timerConn) TimeBlock(_ context.Context, n int) ([]int64, []drivers.OpFailure, error) {
	if c.brokenErr != nil {
		return nil, nil, c.brokenErr
	}
	c.blocks = append(c.blocks, n)
	ns := make([]int64, n)
	var failed []drivers.OpFailure
	for i := range ns {
		ns[i] = c.latency
		if c.fail != nil && c.fail(c.ops+i) {
			failed = append(failed, drivers.OpFailure{Index: i, Message: fmt.Sprintf("op %d failed", c.ops+i)})
		}
	}
	c.ops += n
	return ns, failed, nil
}

// TestTimedElsewhereRecordsTheTimersLatencies: the warm-up's latencies
// are dropped, the timed ops' are recorded as the timer gave them, failed
// ops are counted and not recorded, and MaxConsecutiveErrors failures in
// a row end the block as in Loop.
func TestTimedElsewhereRecordsTheTimersLatencies(t *testing.T) {
	c := &timerConn{latency: 12_345, fail: func(i int) bool { return i == 20 || i == 40 }}
	h := results.NewHistogram()
	if s := timedElsewhere(context.Background(), c, LoopConfig{Warmup: 10}, nil); s.WarmOK != 10 || s.Ops != 0 || s.Err != nil {
		t.Fatalf("warm-up: %+v", s)
	}
	s := timedElsewhere(context.Background(), c, LoopConfig{N: 100}, h)
	if s.Ops != 100 || s.Errors != 2 || s.Err != nil || s.LastErr == nil || s.LastErr.Error() != "op 40 failed" {
		t.Fatalf("sample %+v, want 100 ops with 2 errors, the last op 40's", s)
	}
	if h.TotalCount() != 98 || h.Min() > 12_345 || h.Max() < 12_345 || h.Max() > 12_400 {
		t.Fatalf("recorded %d values from %d to %d ns, want 98 of about 12345", h.TotalCount(), h.Min(), h.Max())
	}
	if len(c.blocks) != 2 || c.blocks[0] != 10 || c.blocks[1] != 100 || c.direct != 0 {
		t.Fatalf("blocks %v, %d ops done outside a block", c.blocks, c.direct)
	}
	c = &timerConn{latency: 1000, fail: func(i int) bool { return i >= 30 }}
	s = timedElsewhere(context.Background(), c, LoopConfig{N: 100}, results.NewHistogram())
	if s.Err == nil || s.Ops != 30+MaxConsecutiveErrors || s.Errors != MaxConsecutiveErrors {
		t.Fatalf("sample %+v, want a stop after %d consecutive errors", s, MaxConsecutiveErrors)
	}
	broken := errors.New("the agent exited")
	s = timedElsewhere(context.Background(), &timerConn{brokenErr: broken}, LoopConfig{N: 100}, results.NewHistogram())
	if !errors.Is(s.Err, broken) || s.Ops != 0 {
		t.Fatalf("sample %+v, want the timer's error and no ops", s)
	}
}

// timerDriver opens a timerConn per path.
type timerDriver struct {
	nopDriver
	conns map[drivers.Transport]*timerConn
}

func (d timerDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	c := &timerConn{transportConn: transportConn{t: ep.Transport}, latency: 20_000}
	if ep.Transport == drivers.Unix {
		c.latency = 10_000
	}
	d.conns[ep.Transport] = c
	return c, nil
}

// TestRunHandsBlocksToATimer: Run hands a BlockTimer each block's keys
// and ops in one call, and its runs hold the timer's latencies, block by
// block, with the paired speedup they give.
func TestRunHandsBlocksToATimer(t *testing.T) {
	d := timerDriver{conns: map[drivers.Transport]*timerConn{}}
	s, c := Settings{N: 500, Warmup: 50, Rounds: 1, Blocks: 10, Seed: 7}, Case{Scenario: PK, Rows: 1000}
	var runs []results.Run
	if err := Run(context.Background(), d, nopPair.Paths(), drivers.ServerInfo{}, s, c, Instance{}, func(r results.Run) { runs = append(runs, r) }); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		c := d.conns[r.Transport]
		want := map[drivers.Transport]int64{drivers.TCP: 20_000, drivers.Unix: 10_000}[r.Transport]
		if r.N != 500 || !r.TransportVerified || len(r.Blocks) != 10 || r.Latency.P50 < want || r.Latency.P50 > want+want/100 {
			t.Errorf("%s: %d ops, verified %v, %d blocks, p50 %d ns; want 500, true, 10, %d", r.Transport, r.N, r.TransportVerified, len(r.Blocks), r.Latency.P50, want)
		}
		if fmt.Sprint(c.blocks) != "[50 50 50 50 50 50 50 50 50 50 50]" || c.direct != 0 || len(c.keys) == 0 {
			t.Errorf("%s: blocks %v, %d ops outside a block, %d keys handed", r.Transport, c.blocks, c.direct, len(c.keys))
		}
	}
	if sp := results.PairedP50(runs); sp == nil || sp.Center < 1.9 || sp.Center > 2.1 {
		t.Errorf("paired p50 speedup %+v, want about 2", sp)
	}
}
