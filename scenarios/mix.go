package scenarios

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// Mix is --op mixed:R/W: R reads to W updates, each op drawn on its own
// (from the case's seed, before timing), so that a block's reads and
// writes interleave as a real workload's do.
type Mix struct {
	Reads  int `json:"reads"`
	Writes int `json:"writes"`
}

// Share is the chance that an op writes.
func (m Mix) Share() float64 { return float64(m.Writes) / float64(m.Reads+m.Writes) }

// String is "R/W" ("" for no mix).
func (m Mix) String() string {
	if m.Reads+m.Writes == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", m.Reads, m.Writes)
}

// ParseOp reads --op: read, update, or mixed:R/W (e.g. mixed:95/5, both
// whole numbers above 0).
func ParseOp(s string) (op string, mix Mix, err error) {
	switch s {
	case drivers.OpRead, drivers.OpUpdate:
		return s, Mix{}, nil
	}
	bad := setting.Err("%s %q is not accepted; use read, update or mixed:R/W (R reads to W updates, e.g. mixed:95/5)", setting.Op, s)
	spec, ok := strings.CutPrefix(s, drivers.OpMixed+":")
	r, w, ok2 := strings.Cut(spec, "/")
	if !ok || !ok2 {
		return "", Mix{}, bad
	}
	reads, err1 := strconv.Atoi(r)
	writes, err2 := strconv.Atoi(w)
	m := Mix{Reads: reads, Writes: writes}
	if err1 != nil || err2 != nil || !m.valid() {
		return "", Mix{}, bad
	}
	return drivers.OpMixed, m, nil
}

// valid says whether both sides of m are 1 to MaxMixPart.
func (m Mix) valid() bool {
	return m.Reads >= 1 && m.Writes >= 1 && m.Reads <= MaxMixPart && m.Writes <= MaxMixPart
}

// writeSource draws, for one worker of a mixed case, which ops write.
type writeSource struct {
	share float64
	rng   *rand.Rand
}

func newWriteSource(m Mix, seed uint64, worker int) *writeSource {
	return &writeSource{share: m.Share(), rng: rand.New(rand.NewPCG(seed^0x6d1f2c3b, uint64(worker)+1))}
}

// fill draws len(w) ops' kinds into w.
func (s *writeSource) fill(w []bool) {
	for i := range w {
		w[i] = s.rng.Float64() < s.share
	}
}
