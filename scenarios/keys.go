package scenarios

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
)

// Key distributions (--keys): which rows, 1..Rows, the ops read.
const (
	// Uniform draws every row alike.
	Uniform = "uniform"
	// Zipf draws YCSB's scrambled zipfian: row rank r (from 0) with
	// probability proportional to 1/(r+1)^theta (Gray et al., "Quickly
	// generating billion-record synthetic databases", SIGMOD 1994, as
	// YCSB's ZipfianGenerator does it), the ranks scattered over the table
	// by a fixed permutation so that hot rows are not neighbours.
	Zipf = "zipf"
	// Sequential reads rows in order, each worker from its own offset,
	// starting over after the last.
	Sequential = "sequential"
	// Hotspot sends a share of the ops to a hot set of rows (YCSB's
	// HotspotIntegerGenerator): hotspot:F puts 1-F of the ops on F of the
	// rows; hotspot:F:OPS puts OPS of them there.
	Hotspot = "hotspot"
)

// DefaultTheta is YCSB's zipfian constant.
const DefaultTheta = 0.99

// Keys says how ops choose rows.
type Keys struct {
	Dist  string  `json:"dist,omitempty"`  // one of Uniform, Zipf, Sequential, Hotspot ("": Uniform)
	Theta float64 `json:"theta,omitempty"` // Zipf's constant
	Hot   float64 `json:"hot,omitempty"`   // Hotspot: the hot set's share of the rows
	Ops   float64 `json:"ops,omitempty"`   // Hotspot: the share of ops that go to the hot set
}

// ParseKeys reads --keys: uniform, zipf[:THETA], sequential,
// hotspot:FRACTION[:OPS].
func ParseKeys(s string) (Keys, error) {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	k := Keys{Dist: name}
	bad := func(why string) (Keys, error) {
		return Keys{}, setting.Err("%s %q %s; use uniform, zipf[:THETA], sequential or hotspot:FRACTION[:OPS] (e.g. zipf:0.99, hotspot:0.2)", setting.Keys, s, why)
	}
	num := func(v string) (float64, bool) {
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	switch name {
	case Uniform, Sequential:
		if hasArg {
			return bad("takes no parameter after " + name)
		}
	case Zipf:
		k.Theta = DefaultTheta
		if hasArg {
			t, ok := num(arg)
			if !ok || t <= 0 || t >= 1 {
				return bad("has a zipf constant outside (0, 1)")
			}
			k.Theta = t
		}
	case Hotspot:
		hot, ops, twoArgs := strings.Cut(arg, ":")
		h, ok := num(hot)
		if !hasArg || !ok || h <= 0 || h >= 1 {
			return bad("needs the hot set's share of the rows, between 0 and 1")
		}
		k.Hot, k.Ops = h, 1-h
		if twoArgs {
			o, ok := num(ops)
			if !ok || o <= 0 || o >= 1 {
				return bad("needs the hot set's share of the ops between 0 and 1")
			}
			k.Ops = o
		}
	default:
		return bad("is not a key distribution")
	}
	return k, nil
}

// validate checks k by the rules ParseKeys reads --keys with (the zero
// Keys is Uniform).
func (k Keys) validate() error {
	if k == (Keys{}) {
		return nil
	}
	read, err := ParseKeys(k.String())
	if err != nil {
		return err
	}
	if read != k {
		return setting.Err("%s %+v holds values its distribution does not take (read as %s it is %+v)", setting.Keys, k, k.String(), read)
	}
	return nil
}

// String is k as --keys takes it.
func (k Keys) String() string {
	switch k.Dist {
	case Zipf:
		return Zipf + ":" + strconv.FormatFloat(k.Theta, 'g', -1, 64)
	case Hotspot:
		return fmt.Sprintf("%s:%g:%g", Hotspot, k.Hot, k.Ops)
	case "":
		return Uniform
	}
	return k.Dist
}

// keySource draws row ids for one worker of a case; it is used between
// blocks only, never while ops are timed.
type keySource struct {
	keys Keys
	rows int64
	rng  *rand.Rand
	next int64    // Sequential's next row
	zipf *zipfian // Zipf's ranks
	perm affine   // Zipf's scattering of ranks over rows
	hotN int64    // Hotspot's hot rows
}

// newKeySource is worker's source of row ids over rows, from seed.
func newKeySource(k Keys, rows, seed uint64, worker, workers int, z *zipfTable) *keySource {
	s := &keySource{keys: k, rows: int64(max(rows, 1)), rng: rand.New(rand.NewPCG(seed, uint64(worker)+1))}
	switch k.Dist {
	case Sequential:
		s.next = int64(worker) * s.rows / int64(max(workers, 1))
	case Zipf:
		s.zipf = z.zipfian()
		s.perm = newAffine(s.rows, seed)
	case Hotspot:
		s.hotN = max(1, int64(math.Round(k.Hot*float64(s.rows))))
	}
	return s
}

// fill draws len(ids) row ids into ids.
func (s *keySource) fill(ids []int64) {
	for i := range ids {
		ids[i] = s.draw()
	}
}

// draw is one row id in 1..rows.
func (s *keySource) draw() int64 {
	switch s.keys.Dist {
	case Sequential:
		id := s.next + 1
		if s.next++; s.next == s.rows {
			s.next = 0
		}
		return id
	case Zipf:
		return s.perm.apply(s.zipf.rank(s.rng.Float64())) + 1
	case Hotspot:
		if s.hotN == s.rows || s.rng.Float64() < s.keys.Ops {
			return s.rng.Int64N(s.hotN) + 1
		}
		return s.hotN + s.rng.Int64N(s.rows-s.hotN) + 1
	}
	return s.rng.Int64N(s.rows) + 1
}

// zipfTable holds the zipfian constants of one case (rows and theta), so
// that every worker shares one computation of zeta.
type zipfTable struct {
	n     int64
	theta float64
	zetan float64
}

// newZipfTable computes zeta(n, theta) = sum of 1/i^theta for i in 1..n.
func newZipfTable(n int64, theta float64) *zipfTable {
	z := &zipfTable{n: n, theta: theta}
	for i := int64(1); i <= n; i++ {
		z.zetan += 1 / math.Pow(float64(i), theta)
	}
	return z
}

// Share is the probability of rank r (from 0).
func (z *zipfTable) Share(r int64) float64 { return 1 / math.Pow(float64(r+1), z.theta) / z.zetan }

// zipfian draws ranks 0..n-1 as YCSB's ZipfianGenerator does (Gray et al.
// 1994): one uniform draw per rank, no table.
type zipfian struct {
	n                   int64
	theta, alpha, zetan float64
	eta, half           float64
}

func (z *zipfTable) zipfian() *zipfian {
	zeta2 := 1 + 1/math.Pow(2, z.theta)
	g := &zipfian{n: z.n, theta: z.theta, alpha: 1 / (1 - z.theta), zetan: z.zetan}
	g.eta = (1 - math.Pow(2/float64(z.n), 1-z.theta)) / (1 - zeta2/z.zetan)
	g.half = 1 + math.Pow(0.5, z.theta)
	return g
}

// rank maps a uniform u in [0, 1) to a rank.
func (g *zipfian) rank(u float64) int64 {
	uz := u * g.zetan
	switch {
	case uz < 1 || g.n == 1:
		return 0
	case uz < g.half:
		return 1
	}
	r := int64(float64(g.n) * math.Pow(g.eta*u-g.eta+1, g.alpha))
	return min(max(r, 0), g.n-1)
}

// affine is a permutation of 0..n-1: x -> (a*x + b) mod n with a coprime
// to n, so that no two ranks share a row.
type affine struct{ a, b, n int64 }

func newAffine(n int64, seed uint64) affine {
	a := int64(0x9E3779B1) % n // a large odd constant (Knuth's multiplicative hash)
	for a < 1 || gcd(a, n) != 1 {
		a++
		if a >= n {
			a = 1
		}
	}
	return affine{a: a, b: int64(seed % uint64(n)), n: n}
}

func (p affine) apply(x int64) int64 {
	hi, lo := bits.Mul64(uint64(p.a), uint64(x))
	ax := bits.Rem64(hi, lo, uint64(p.n))
	return int64((ax + uint64(p.b)) % uint64(p.n))
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
