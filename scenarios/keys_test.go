package scenarios

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

func TestParseKeys(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Keys
		bad  bool
	}{
		{in: "uniform", want: Keys{Dist: Uniform}},
		{in: "sequential", want: Keys{Dist: Sequential}},
		{in: "zipf", want: Keys{Dist: Zipf, Theta: 0.99}},
		{in: "zipf:0.5", want: Keys{Dist: Zipf, Theta: 0.5}},
		{in: "hotspot:0.2", want: Keys{Dist: Hotspot, Hot: 0.2, Ops: 0.8}},
		{in: "hotspot:0.1:0.5", want: Keys{Dist: Hotspot, Hot: 0.1, Ops: 0.5}},
		{in: "zipf:1", bad: true}, {in: "zipf:NaN", bad: true}, {in: "hotspot", bad: true},
		{in: "hotspot:1.5", bad: true}, {in: "uniform:3", bad: true}, {in: "normal", bad: true}, {in: "", bad: true},
	} {
		got, err := ParseKeys(tt.in)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("ParseKeys(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

// draws returns n ids drawn by one worker's source.
func draws(k Keys, rows, n int) []int64 {
	var z *zipfTable
	if k.Dist == Zipf {
		z = newZipfTable(int64(rows), k.Theta)
	}
	ids := make([]int64, n)
	newKeySource(k, uint64(rows), 42, 0, 1, z).fill(ids)
	return ids
}

func counts(ids []int64) map[int64]int {
	c := map[int64]int{}
	for _, id := range ids {
		c[id]++
	}
	return c
}

// TestUniformTouchesAlmostEveryRow: 10,000 uniform draws over 1,000 rows
// miss a row with probability (999/1000)^10000 = 4.5e-5, so about 0.05
// rows of 1,000 are missed; 990 is far below what a uniform draw reaches.
func TestUniformTouchesAlmostEveryRow(t *testing.T) {
	c := counts(draws(Keys{Dist: Uniform}, 1000, 10000))
	if len(c) < 990 {
		t.Fatalf("%d distinct rows of 1000", len(c))
	}
	for id := range c {
		if id < 1 || id > 1000 {
			t.Fatalf("id %d outside 1..1000", id)
		}
	}
}

// TestZipfHottestShare checks the hottest row's share against 1/zeta(n,
// theta), computed independently (Python: sum(1/i**theta for i in
// range(1, n+1))): n=1000, theta=0.99: 0.129384; theta=0.5: 0.016181;
// n=100000, theta=0.99: 0.078257.
func TestZipfHottestShare(t *testing.T) {
	for _, tt := range []struct {
		rows  int
		theta float64
		want  float64
	}{{1000, 0.99, 0.12938362697857184}, {1000, 0.5, 0.016180965650554217}, {100000, 0.99, 0.07825743810383633}} {
		const n = 200000
		c := counts(draws(Keys{Dist: Zipf, Theta: tt.theta}, tt.rows, n))
		hottest := 0
		for _, v := range c {
			hottest = max(hottest, v)
		}
		share := float64(hottest) / n
		if math.Abs(share-tt.want)/tt.want > 0.2 {
			t.Errorf("rows %d theta %v: hottest share %.4f, theory %.4f", tt.rows, tt.theta, share, tt.want)
		}
		if z := newZipfTable(int64(tt.rows), tt.theta); math.Abs(z.Share(0)-tt.want) > 1e-9 {
			t.Errorf("rows %d theta %v: zeta gives %.6f, want %.6f", tt.rows, tt.theta, z.Share(0), tt.want)
		}
		if tt.theta == 0.99 && c[1] == hottest {
			t.Errorf("the hottest row is row 1: the ranks were not scattered")
		}
	}
}

func TestAffineIsAPermutation(t *testing.T) {
	for _, n := range []int64{1, 2, 7, 1000, 1024, 99991} {
		p := newAffine(n, 12345)
		seen := make([]bool, n)
		for x := int64(0); x < n; x++ {
			y := p.apply(x)
			if y < 0 || y >= n || seen[y] {
				t.Fatalf("n=%d: %d -> %d repeats or leaves the range", n, x, y)
			}
			seen[y] = true
		}
	}
}

func TestSequentialAndHotspot(t *testing.T) {
	if got := draws(Keys{Dist: Sequential}, 5, 7); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 1, 2}) {
		t.Fatalf("sequential: %v", got)
	}
	ids := draws(Keys{Dist: Hotspot, Hot: 0.1, Ops: 0.9}, 1000, 100000)
	hot := 0
	for _, id := range ids {
		if id <= 100 {
			hot++
		}
	}
	if share := float64(hot) / float64(len(ids)); math.Abs(share-0.9) > 0.01 {
		t.Fatalf("hotspot: %.3f of ops on the hot 10%%, want 0.9", share)
	}
}

// keyedDriver's conns record the row each op read, per transport.
type keyedDriver struct {
	nopDriver
	mu   sync.Mutex
	seen map[drivers.Transport][]int64
}

type keyedConn struct {
	d   *keyedDriver
	t   drivers.Transport
	ids []int64
}

func (d *keyedDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	return &keyedConn{d: d, t: ep.Transport}, nil
}
func (c *keyedConn) UseKeys(ids []int64)          { c.ids = append(c.ids[:0], ids...) }
func (c *keyedConn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }
func (c *keyedConn) DoKey(_ context.Context, i int, _ bool) error {
	id := c.ids[i]
	c.d.mu.Lock()
	c.d.seen[c.t] = append(c.d.seen[c.t], id)
	c.d.mu.Unlock()
	return nil
}
func (c *keyedConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{Transport: c.t}, nil
}
func (*keyedConn) Close() error { return nil }

// TestPairsGetTheSameKeys: both blocks of every pair read the same rows in
// the same order, whichever ran first, and the runs count what they read.
func TestPairsGetTheSameKeys(t *testing.T) {
	for _, dist := range []string{Uniform, Zipf, Sequential} {
		d := &keyedDriver{seen: map[drivers.Transport][]int64{}}
		k, _ := ParseKeys(dist)
		s, c := Settings{N: 1000, Warmup: 0, Rounds: 2, Blocks: 10, Seed: 7, Keys: k}, Case{Rows: 500}
		var runs []results.Run
		err := Run(context.Background(), d, nopPair.Paths(), drivers.ServerInfo{}, s, c, Instance{}, func(r results.Run) { runs = append(runs, r) })
		if err != nil {
			t.Fatal(err)
		}
		tcp, unix := d.seen[drivers.TCP], d.seen[drivers.Unix]
		if len(tcp) != 2000 || !slices.Equal(tcp, unix) {
			t.Fatalf("%s: TCP read %d rows, Unix %d; the sequences differ", dist, len(tcp), len(unix))
		}
		if slices.Equal(tcp[:100], tcp[100:200]) && dist != Sequential {
			t.Fatalf("%s: two block pairs read the same rows", dist)
		}
		for _, r := range runs {
			want := int64(len(counts(tcp[(r.Round-1)*1000 : r.Round*1000])))
			if r.DistinctKeys != want {
				t.Fatalf("%s round %d %s: %d distinct keys, want %d", dist, r.Round, r.Transport, r.DistinctKeys, want)
			}
		}
	}
}

// TestKeyBuffersAreBounded: thousands of workers share at most
// maxKeysHeld ids per block (never less than 256 each), so that a wide
// run does not hold gigabytes of keys.
func TestKeyBuffersAreBounded(t *testing.T) {
	for _, tt := range []struct{ workers, want int }{{1, maxKeyBuffer}, {64, maxKeyBuffer}, {1024, 4096}, {4096, 1024}, {1 << 20, 256}} {
		if got := keyBuffer(tt.workers); got != tt.want {
			t.Errorf("keyBuffer(%d) = %d, want %d", tt.workers, got, tt.want)
		}
	}
	k := newCaseKeys(caseRun{Settings: Settings{Seed: 1}, Case: Case{Rows: 1000, Concurrency: 4096}})
	if k.size*len(k.buf) > maxKeysHeld {
		t.Fatalf("%d workers x %d ids each is over %d", len(k.buf), k.size, maxKeysHeld)
	}
}
