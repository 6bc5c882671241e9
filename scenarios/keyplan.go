package scenarios

import (
	"math/bits"
	"slices"

	"github.com/dbsock/dbsock/drivers"
)

// maxKeyBuffer bounds a worker's ids per block: a longer block (or one
// timed by --duration) reads them over again from the start. All workers
// together hold at most maxKeysHeld ids (32 MiB), so that thousands of
// workers get shorter buffers rather than gigabytes.
const (
	maxKeyBuffer = 1 << 16
	maxKeysHeld  = 1 << 22
)

// keyBuffer is how many ids one of workers holds per block.
func keyBuffer(workers int) int { return max(min(maxKeyBuffer, maxKeysHeld/max(workers, 1)), 256) }

// caseKeys are one case's row ids: each worker's sources for timed ops and
// for warm-up, and the buffer one block pair's ids are drawn into. The two
// blocks of a pair get the same ids, drawn before either is timed.
type caseKeys struct {
	rows        int
	size        int // ids per worker and block (keyBuffer)
	timed, warm []*keySource
	buf         [][]int64
	// Under --op mixed, which of those ops write: drawn like the ids, the
	// same for both blocks of a pair.
	timedW, warmW []*writeSource
	wbuf          [][]bool
}

// newCaseKeys returns the case's keys, or nil when the ops read one row
// (opt.Rows 0).
func newCaseKeys(opt caseRun) *caseKeys {
	if opt.Rows <= 0 {
		return nil
	}
	k := &caseKeys{rows: opt.Rows, size: keyBuffer(opt.workers())}
	var z *zipfTable
	if opt.Keys.Dist == Zipf {
		z = newZipfTable(int64(opt.Rows), opt.Keys.Theta)
	}
	n := opt.workers()
	for w := 0; w < n; w++ {
		k.timed = append(k.timed, newKeySource(opt.Keys, uint64(opt.Rows), opt.Seed, w, n, z))
		k.warm = append(k.warm, newKeySource(opt.Keys, uint64(opt.Rows), opt.Seed^0x5bd1e995, w, n, z))
		k.buf = append(k.buf, nil) // grown to what the blocks need
		if opt.Op == drivers.OpMixed {
			k.timedW = append(k.timedW, newWriteSource(opt.Mix, opt.Seed, w))
			k.warmW = append(k.warmW, newWriteSource(opt.Mix, opt.Seed^0x5bd1e995, w))
			k.wbuf = append(k.wbuf, nil)
		}
	}
	return k
}

// hand draws n ids per worker from sources (and under --op mixed, from
// wsources which of them write) and gives them to that worker on every
// side.
func (k *caseKeys) hand(sources []*keySource, wsources []*writeSource, n int, sides ...*side) {
	n = min(max(n, 1), k.size)
	for w, src := range sources {
		k.buf[w] = slices.Grow(k.buf[w][:0], n)[:n]
		src.fill(k.buf[w])
		var writes []bool
		if wsources != nil {
			k.wbuf[w] = slices.Grow(k.wbuf[w][:0], n)[:n]
			writes = k.wbuf[w]
			wsources[w].fill(writes)
		}
		for _, s := range sides {
			wk := s.ws[w]
			if kc, ok := wk.op.(drivers.Keyed); ok {
				kc.UseKeys(k.buf[w])
				s.keyed = true
			}
			if kc, ok := wk.warm.(drivers.Keyed); ok && wk.warm != wk.op {
				kc.UseKeys(k.buf[w])
			}
			wk.keys, wk.writes = len(k.buf[w]), writes
		}
	}
}

// mark records on s which rows its workers' last block read (ops run in
// the order handed, starting over after the buffer's end).
func (k *caseKeys) mark(s *side) {
	if !s.keyed {
		return
	}
	if s.touched == nil {
		s.touched = make(bitset, k.rows/64+1)
	}
	for w, wk := range s.ws {
		ids := k.buf[w]
		if used := int(wk.sample.Ops); used < len(ids) {
			ids = ids[:used]
		}
		for _, id := range ids {
			s.touched.set(id - 1)
		}
	}
}

// bitset is one bit per row.
type bitset []uint64

func (b bitset) set(i int64) { b[i/64] |= 1 << (uint(i) % 64) }

// count is how many bits are set.
func (b bitset) count() int64 {
	var n int
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return int64(n)
}
