package scenarios

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

func TestParseOp(t *testing.T) {
	for _, tt := range []struct {
		in   string
		op   string
		mix  Mix
		fail bool
	}{
		{in: "read", op: drivers.OpRead},
		{in: "update", op: drivers.OpUpdate},
		{in: "mixed:95/5", op: drivers.OpMixed, mix: Mix{95, 5}},
		{in: "mixed:1/1", op: drivers.OpMixed, mix: Mix{1, 1}},
		{in: "mixed", fail: true},
		{in: "mixed:95", fail: true},
		{in: "mixed:100/0", fail: true},
		{in: "mixed:0/100", fail: true},
		{in: "mixed:-1/5", fail: true},
		{in: "mixed:a/b", fail: true},
		{in: "write", fail: true},
	} {
		op, mix, err := ParseOp(tt.in)
		if (err != nil) != tt.fail || op != tt.op || mix != tt.mix {
			t.Errorf("ParseOp(%q) = %q, %v, %v", tt.in, op, mix, err)
		}
	}
	if s := (Mix{95, 5}).Share(); s != 0.05 {
		t.Errorf("95/5 writes %v of the ops", s)
	}
}

// mixedDriver's conns record, per transport, each op's row and whether it
// wrote; a write takes 2 ms, a read none, so that the loop's split of the
// two kinds shows in the latencies.
type mixedDriver struct {
	keyedDriver
	wrote map[drivers.Transport][]bool
}

type mixedConn struct {
	keyedConn
	d *mixedDriver
}

func (d *mixedDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	return &mixedConn{keyedConn: keyedConn{d: &d.keyedDriver, t: ep.Transport}, d: d}, nil
}
func (c *mixedConn) DoKey(_ context.Context, i int, w bool) error {
	c.d.mu.Lock()
	c.d.seen[c.t] = append(c.d.seen[c.t], c.ids[i])
	c.d.wrote[c.t] = append(c.d.wrote[c.t], w)
	c.d.mu.Unlock()
	if w {
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// TestMixedSplitsReadsAndWrites: under --op mixed both blocks of each pair
// get the same rows and the same reads and writes, about the share asked
// for write, and each run reports its reads and its writes as two cases,
// each with the latencies of its own kind.
func TestMixedSplitsReadsAndWrites(t *testing.T) {
	d := &mixedDriver{keyedDriver: keyedDriver{seen: map[drivers.Transport][]int64{}}, wrote: map[drivers.Transport][]bool{}}
	s, c := Settings{N: 400, Warmup: 20, Rounds: 1, Blocks: 4, Seed: 11, Op: drivers.OpMixed, Mix: Mix{3, 1}}, Case{Rows: 100}
	var runs []results.Run
	if err := Run(context.Background(), d, nopPair.Paths(), drivers.ServerInfo{}, s, c, Instance{}, func(r results.Run) { runs = append(runs, r) }); err != nil {
		t.Fatal(err)
	}
	tcp, unix := d.wrote[drivers.TCP], d.wrote[drivers.Unix]
	if len(tcp) != 420 || !slices.Equal(tcp, unix) || !slices.Equal(d.seen[drivers.TCP], d.seen[drivers.Unix]) {
		t.Fatalf("TCP did %d ops, Unix %d; the two transports' sequences differ", len(tcp), len(unix))
	}
	writes := 0
	for _, w := range tcp[20:] { // after the warm-up
		if w {
			writes++
		}
	}
	if share := float64(writes) / 400; math.Abs(share-0.25) > 0.07 {
		t.Errorf("%.3f of the ops wrote, want about 0.25", share)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs, want reads and writes on both transports", len(runs))
	}
	for _, r := range runs {
		if r.Mix != "3/1" || (r.Op != drivers.OpRead && r.Op != drivers.OpUpdate) {
			t.Fatalf("run %s case %+v: want op read or update of mix 3/1", r.Transport, r.Case)
		}
		want := int64(writes)
		if r.Op == drivers.OpRead {
			want = int64(400 - writes)
		}
		if r.N != want || len(r.Blocks) != 4 {
			t.Errorf("%s %s: %d ops in %d blocks, want %d in 4", r.Transport, r.Op, r.N, len(r.Blocks), want)
		}
		slow := r.Latency.P50 >= int64(2*time.Millisecond)
		if slow != (r.Op == drivers.OpUpdate) {
			t.Errorf("%s %s: p50 %s; the writes (2 ms) and reads (none) are not apart", r.Transport, r.Op, time.Duration(r.Latency.P50))
		}
	}
}
