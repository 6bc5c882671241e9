package scenarios

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// scriptConn is a unit-test double: op i fails when fail(i) says so.
type scriptConn struct {
	calls int
	fail  func(i int) bool
}

func (c *scriptConn) Do(context.Context) error {
	i := c.calls
	c.calls++
	if c.fail != nil && c.fail(i) {
		return errors.New("scripted failure")
	}
	return nil
}
func (c *scriptConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{}, nil
}
func (c *scriptConn) Close() error { return nil }

func TestLoopCountsAndRecords(t *testing.T) {
	c := &scriptConn{}
	h := results.NewHistogram()
	s := Loop(context.Background(), c, LoopConfig{Warmup: 7, N: 100}, h, nil)
	if c.calls != 107 || s.Ops != 100 || s.Errors != 0 || s.Err != nil {
		t.Fatalf("calls=%d sample=%+v, want 107 calls, 100 ops, no errors", c.calls, s)
	}
	if h.TotalCount() != 100 {
		t.Fatalf("recorded %d values, want 100", h.TotalCount())
	}
	if s.Elapsed <= 0 {
		t.Fatal("elapsed must be positive")
	}
}

func TestLoopCountsErrorsWithoutRecordingThem(t *testing.T) {
	warmup := 5
	c := &scriptConn{fail: func(i int) bool { return i >= warmup && (i-warmup)%10 == 0 }}
	h := results.NewHistogram()
	s := Loop(context.Background(), c, LoopConfig{Warmup: warmup, N: 100}, h, nil)
	if s.Ops != 100 || s.Errors != 10 || s.Err != nil || s.LastErr == nil {
		t.Fatalf("sample = %+v, want 100 ops, 10 errors, not stopped", s)
	}
	if h.TotalCount() != 90 {
		t.Fatalf("recorded %d, want 90 (failed ops are not latencies)", h.TotalCount())
	}
}

func TestLoopStopsAfterConsecutiveErrors(t *testing.T) {
	c := &scriptConn{fail: func(i int) bool { return i >= 50 }}
	s := Loop(context.Background(), c, LoopConfig{N: 1000}, results.NewHistogram(), nil)
	if s.Err == nil || s.Ops != 50+MaxConsecutiveErrors || s.Errors != MaxConsecutiveErrors {
		t.Fatalf("sample = %+v, want a stop after %d consecutive errors", s, MaxConsecutiveErrors)
	}
}

func TestLoopStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &scriptConn{fail: func(i int) bool {
		if i == 300 {
			cancel()
		}
		return false
	}}
	s := Loop(ctx, c, LoopConfig{N: 100000}, results.NewHistogram(), nil)
	if !errors.Is(s.Err, context.Canceled) || s.Ops >= 100000 || s.Ops < 300 {
		t.Fatalf("sample = %+v, want cancelled soon after op 300", s)
	}
}

func TestOpenOrderAlternates(t *testing.T) {
	if o := openOrder(2, 1); !slices.Equal(o, []int{0, 1}) {
		t.Fatalf("round 1 = %v, want the first path (TCP) first", o)
	}
	if o := openOrder(3, 2); !slices.Equal(o, []int{2, 1, 0}) {
		t.Fatalf("round 2 = %v, want the paths backward", o)
	}
}

// TestBlockOrderIsAFairShuffle: each of three paths goes first in about a
// third of the groups, every order is a permutation, and with two paths
// the second goes first exactly when the generator draws 1 (the order a
// seed gave before there were more than two paths).
func TestBlockOrderIsAFairShuffle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	order := make([]int, 3)
	first := make([]int, 3)
	const n = 30000
	for range n {
		blockOrder(rng, order)
		if s := slices.Sorted(slices.Values(order)); !slices.Equal(s, []int{0, 1, 2}) {
			t.Fatalf("order %v is not a permutation", order)
		}
		first[order[0]]++
	}
	for i, c := range first {
		// A third of 30,000 is 10,000 with a standard deviation of 82.
		if c < 9500 || c > 10500 {
			t.Errorf("path %d went first %d times of %d", i, c, n)
		}
	}
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	two := make([]int, 2)
	for range 100 {
		blockOrder(a, two)
		if want := b.IntN(2) == 1; (two[0] == 1) != want {
			t.Fatalf("two paths: order %v, want the second first = %v", two, want)
		}
	}
}

type nopConn struct{}

func (nopConn) Do(context.Context) error { return nil }
func (nopConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{}, nil
}
func (nopConn) Close() error { return nil }

// BenchmarkHarness measures what the timing loop itself costs per op:
// two clock reads and one histogram record around an op that does nothing.
func BenchmarkHarness(b *testing.B) {
	h := results.NewHistogram()
	b.ReportAllocs()
	b.ResetTimer()
	Loop(context.Background(), nopConn{}, LoopConfig{N: b.N}, h, nil)
}

// BenchmarkHarnessBlocks is the same per op with the block bookkeeping of
// a default round around it (10 block pairs, both transports): goroutine
// start, watchdog, histogram reset and merge per block. Compare its ns/op
// and allocs/op with BenchmarkHarness.
func BenchmarkHarnessBlocks(b *testing.B) {
	d := nopDriver{}
	opt := caseRun{Settings: Settings{N: max(b.N/2, 1), Blocks: DefaultBlocks}, Case: Case{Scenario: PK}}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := measureRound(context.Background(), d, nopPair.Paths(), opt, 1, rand.New(rand.NewPCG(1, 2)), nil); err != nil {
		b.Fatal(err)
	}
}

// nopDriver opens nopConns that verify as whatever transport was asked.
type nopDriver struct{ hangDriver }

func (nopDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	return transportConn{t: ep.Transport}, nil
}

type transportConn struct {
	nopConn
	t drivers.Transport
}

func (c transportConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{Transport: c.t}, nil
}

var nopPair = drivers.Pair{TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
	Unix: drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/nop.sock"}}

func TestLoopReportsProgress(t *testing.T) {
	for _, n := range []int{1, 255, 256, 257, 1000} {
		var p atomic.Int64
		Loop(context.Background(), &scriptConn{}, LoopConfig{Warmup: 3, N: n, Progress: &p}, results.NewHistogram(), nil)
		if p.Load() != int64(n) {
			t.Errorf("n=%d: progress %d", n, p.Load())
		}
	}
}

func TestOpenLoopWaitIsCutShort(t *testing.T) {
	// One op every 10 s: a cancel or the end of the duration must not wait
	// for the next one.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	s := Loop(ctx, nopConn{}, LoopConfig{N: 5, Interval: 10 * time.Second}, results.NewHistogram(), results.NewHistogram())
	if took := time.Since(start); took > 2*time.Second || s.Ops != 1 || !errors.Is(s.Err, context.Canceled) {
		t.Fatalf("cancelled open loop: took %s, %d ops, err %v; want 1 op and a prompt stop", took, s.Ops, s.Err)
	}
	start = time.Now()
	s = Loop(context.Background(), nopConn{}, LoopConfig{Until: time.Now().Add(200 * time.Millisecond), Interval: 10 * time.Second},
		results.NewHistogram(), results.NewHistogram())
	if took := time.Since(start); took > 2*time.Second || s.Ops != 1 || s.Err != nil {
		t.Fatalf("open loop with a 200ms duration: took %s, %d ops, err %v; want 1 op, ended by the duration", took, s.Ops, s.Err)
	}
}

// BenchmarkHarnessKeyed is BenchmarkHarnessBlocks over 10,000 rows with
// uniform keys: the ids each block pair reads are drawn and handed to the
// conns between blocks; inside the timed loop nothing more happens.
func BenchmarkHarnessKeyed(b *testing.B) {
	d := keyedNopDriver{}
	opt := caseRun{Settings: Settings{N: max(b.N/2, 1), Blocks: DefaultBlocks}, Case: Case{Scenario: PK, Rows: 10000}}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := measureRound(context.Background(), d, nopPair.Paths(), opt, 1, rand.New(rand.NewPCG(1, 2)), newCaseKeys(opt)); err != nil {
		b.Fatal(err)
	}
}

// keyedNopDriver opens conns that take their rows and do nothing with them.
type keyedNopDriver struct{ nopDriver }

type keyedNopConn struct {
	transportConn
	ids []int64
	sum int64
}

func (keyedNopDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	return &keyedNopConn{transportConn: transportConn{t: ep.Transport}}, nil
}
func (c *keyedNopConn) UseKeys(ids []int64) { c.ids = append(c.ids[:0], ids...) }
func (c *keyedNopConn) DoKey(_ context.Context, i int, write bool) error {
	if write {
		c.sum--
	}
	c.sum += c.ids[i]
	return nil
}

// BenchmarkHarnessMixed is BenchmarkHarnessKeyed under --op mixed:95/5:
// the reads and the writes recorded apart. Compare its ns/op and
// allocs/op with BenchmarkHarnessKeyed.
func BenchmarkHarnessMixed(b *testing.B) {
	d := keyedNopDriver{}
	opt := caseRun{Settings: Settings{N: max(b.N/2, 1), Blocks: DefaultBlocks, Op: drivers.OpMixed, Mix: Mix{95, 5}}, Case: Case{Scenario: PK, Rows: 10000}}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := measureRound(context.Background(), d, nopPair.Paths(), opt, 1, rand.New(rand.NewPCG(1, 2)), newCaseKeys(opt)); err != nil {
		b.Fatal(err)
	}
}

// slowConn takes d per op.
type slowConn struct {
	nopConn
	d time.Duration
}

func (c slowConn) Do(context.Context) error { time.Sleep(c.d); return nil }

// TestDurationEndsAfterTheOpThatCrossesIt: a timed loop (--duration) with
// slow ops stops at the first op that ends past Until, not up to 256 ops
// later.
func TestDurationEndsAfterTheOpThatCrossesIt(t *testing.T) {
	began := time.Now()
	s := Loop(context.Background(), slowConn{d: 5 * time.Millisecond}, LoopConfig{Until: began.Add(20 * time.Millisecond)}, results.NewHistogram(), nil)
	if s.Ops < 3 || s.Ops > 6 {
		t.Fatalf("%d ops of 5 ms in a 20 ms window, want about 4", s.Ops)
	}
}

// TestEveryPathRunsInEveryGroup: with three paths, each round gives one run
// per path, verified on its own transport, with one block per path in each
// group; the blocks' indices cover the round in the order they ran.
func TestEveryPathRunsInEveryGroup(t *testing.T) {
	paths := drivers.Paths{
		{Transport: drivers.TCP, Address: "127.0.0.1:1"},
		{Transport: tcp6, Address: "[::1]:1"},
		{Transport: drivers.Unix, Address: "/tmp/nop.sock"},
	}
	s, c := Settings{N: 60, Warmup: 2, Rounds: 2, Blocks: 6, Seed: 3}, Case{Scenario: PK}
	var runs []results.Run
	if err := Run(context.Background(), nopDriver{}, paths, drivers.ServerInfo{}, s, c, Instance{}, func(r results.Run) { runs = append(runs, r) }); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs, want 3 paths x 2 rounds", len(runs))
	}
	for round := 1; round <= 2; round++ {
		indices := map[int]bool{}
		for i, p := range paths {
			r := runs[(round-1)*3+i]
			if r.Round != round || r.Transport != p.Transport || !r.TransportVerified || r.N != 60 {
				t.Fatalf("round %d run %d: %s round %d, verified %v, %d ops", round, i, r.Transport, r.Round, r.TransportVerified, r.N)
			}
			if len(r.Blocks) != 6 {
				t.Fatalf("%s: %d blocks, want 6", r.Transport, len(r.Blocks))
			}
			for j, b := range r.Blocks {
				if b.Pair != j || b.Index/3 != j || indices[b.Index] {
					t.Errorf("%s block %d: group %d, index %d", r.Transport, j, b.Pair, b.Index)
				}
				indices[b.Index] = true
			}
		}
		if len(indices) != 18 {
			t.Errorf("round %d: %d distinct block indices, want 18", round, len(indices))
		}
	}
}

// tcp6 is a third path's name, for tests of any number of paths.
const tcp6 = drivers.Transport("tcp6")

// TestKeyWalkTakesStepKeysPerOp: a pipelined op of depth 2 over 5 keys
// starts at keys 0, 2, 4, 1, 3, 0, ... (it takes its own key and the
// next), so that every key is read as often as with one key per op.
func TestKeyWalkTakesStepKeysPerOp(t *testing.T) {
	w := (&LoopConfig{Keys: 5, Step: 2}).walk()
	var got []int
	for range 6 {
		got = append(got, w.next())
	}
	if want := []int{0, 2, 4, 1, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
	one := (&LoopConfig{}).walk() // no keys handed: the one-row lookup
	if a, b := one.next(), one.next(); a != 0 || b != 0 {
		t.Errorf("no keys: %d, %d; want 0, 0", a, b)
	}
}

// TestRunWithoutPathsSaysSo: a server that serves none of the paths asked
// (a hop whose leg to the server is never its socket, asked for tcp and
// unix) leaves Run no path: it says so, and emits nothing, where it
// indexed the first path and panicked.
func TestRunWithoutPathsSaysSo(t *testing.T) {
	s, c := Settings{N: 60, Warmup: 2, Rounds: 1, Blocks: 6, Seed: 3}, Case{Scenario: PK}
	emitted := 0
	err := Run(context.Background(), nopDriver{}, nil, drivers.ServerInfo{}, s, c, Instance{}, func(results.Run) { emitted++ })
	if err == nil || !strings.Contains(err.Error(), "no path to measure") || emitted != 0 {
		t.Fatalf("Run with no paths: error %v, %d runs emitted; want \"no path to measure\" and none", err, emitted)
	}
}
