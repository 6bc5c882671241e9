package agents

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"time"
)

// What an agent reports is bounded by what dbsock sees from below as well
// as from above (audit.go has the server's side). From above, no block's
// latencies add up to more than dbsock's clock gives the agent for it
// (checkWall). From below, on dbsock's clock from a request's write to
// its answer's first byte (the agent's span: an agent writes its answer
// once its ops are done):
//
//   - coverage: the latencies of a path's blocks cover most of the
//     agent's span (the best of the path's last boundsWindow blocks, each
//     of at least minBoundedOps ops and minBoundedSpan, none of which
//     failed: an error may come back at once), so that latencies
//     cut short, or made up for ops done in another way, leave a hole
//     dbsock sees;
//   - the gap: what the agent's span leaves uncovered per op (its loop,
//     its clock, its answer) does not depend on the route, so it is about
//     the same on every path of a case (the least of each path's last
//     blocks, within minGapSkew and maxGapSkew of an op); an agent that
//     shortens one path's latencies moves it there alone;
//   - no block's latencies repeat another's (a block answered with
//     figures of another);
//   - at load, the span of a load is dbsock's: a block's time is never
//     taken shorter than dbsock's span less tailAllowance, and the least
//     time between a path's last loads' last ops and their answers is
//     within tailAllowance and maxTailShare of the span (tail).
//
// Padding inside a real op (a sleep inside the timed span) moves none of
// these: docs/agents.md says what is and is not checked.

// The bounds, set from honest agents of every stack (C, Python, Node.js,
// PHP and dbsock's own Go agent) on every server dbsock starts that its
// stacks reach, measured at rest and at load on a 2-vCPU machine that other
// work kept busy (docs/agents.md has the figures). A stall of the
// machine only ever lowers a block's coverage and raises its gap, so the
// best coverage and the least gap of a few blocks are what the agent's
// own cost allows: at rest, the best coverage of 5 blocks was never under
// 0.90 (a single block's 0.085, under a 185 ms stall outside its ops),
// and the least gaps per op of two paths, 1 to 4 µs, differed by at most
// 2 µs and 7.7% of an op (Python); at load in a closed loop, the busiest
// connection's coverage had a median of 0.64 to 0.97; paced, the last op
// ended 2 to 13 ms (median) and at most 75 ms before the answer.
const (
	// MinCoverage is the least coverage the best of a path's last blocks
	// at rest must reach; MinLoadCoverage that of its busiest
	// connection's at load, closed loop (connections that finish early
	// wait for the last).
	MinCoverage     = 0.5
	MinLoadCoverage = 0.3
	// maxGapSkew is how far the least gaps of two paths may differ, as a
	// share of the faster path's median op, beyond minGapSkew.
	maxGapSkew = 0.15
	minGapSkew = 2 * time.Microsecond
	// boundsWindow is how many of a path's last blocks are weighed
	// together, from minWindow of them on.
	boundsWindow = 5
	minWindow    = 3
	// minBoundedOps and minBoundedSpan: a block with fewer ops, or that
	// took the agent less, is not weighed (a request's own cost, a few
	// hundred µs, weighs too much in it: an honest Python agent's blocks
	// of 30 ops left 17 µs an op uncovered on one path and 4 on the
	// other).
	minBoundedOps  = 100
	minBoundedSpan = 2 * time.Millisecond
	// minRepeatOps: a block of fewer ops that repeats another's
	// latencies may do so by chance.
	minRepeatOps = 16
)

// The tails of a load: the time from its last op's end to dbsock's first
// byte of its answer, which holds the agent's start (its T0 picked a few
// ms ahead) and the encoding of its answer. One load's tail may be long
// (an honest Node.js agent's was 454 ms of a 1 s span once, on a machine
// busy with other work); an agent whose every load ends long before its
// answer says its ops kept a schedule they did not keep.
const (
	// tailAllowance, plus tailShare of the span: a block's time is at
	// least dbsock's span less that, whatever the agent says.
	tailAllowance = 25 * time.Millisecond
	tailShare     = 0.025
	// maxTailShare: the least tail of a path's last loads, less
	// tailAllowance, is at most this share of its span.
	maxTailShare = 0.10
)

// bounds is what a driver keeps of its paths' recent blocks.
type bounds struct {
	paths map[string]*pathBounds
	// seen are the fingerprints of the blocks' sorted latencies.
	seen map[uint64]string
}

// pathBounds are one path's last blocks: their coverage, their gap per
// op and their mean op; and its last loads' tails, as a share of their
// spans (beyond the allowance).
type pathBounds struct {
	coverage, gap, op, tail []float64
}

// sample is one block, or one connection of a load, as the bounds weigh
// it: its ops, their latencies' sum, and the agent's span.
type sample struct {
	ops  int
	sum  int64
	span time.Duration
}

func (s sample) weighed() bool {
	return s.ops >= minBoundedOps && s.span >= minBoundedSpan
}

// push keeps v as the newest of at most boundsWindow.
func push(xs []float64, v float64) []float64 {
	xs = append(xs, v)
	if len(xs) > boundsWindow {
		xs = xs[1:]
	}
	return xs
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (b *bounds) path(p string) *pathBounds {
	if b.paths == nil {
		b.paths = map[string]*pathBounds{}
	}
	if b.paths[p] == nil {
		b.paths[p] = &pathBounds{}
	}
	return b.paths[p]
}

// block weighs a block of path p at rest and says what is wrong with it
// and the path's blocks before it.
func (b *bounds) block(p string, s sample) error {
	if !s.weighed() {
		return nil
	}
	pb := b.path(p)
	pb.coverage = push(pb.coverage, float64(s.sum)/float64(s.span))
	pb.gap = push(pb.gap, float64(s.span.Nanoseconds()-s.sum)/float64(s.ops))
	pb.op = push(pb.op, float64(s.sum)/float64(s.ops))
	if len(pb.coverage) >= minWindow {
		if c := slices.Max(pb.coverage); c < MinCoverage {
			return fmt.Errorf("the latencies of its last %d blocks on %s cover at best %.2f of the time it took for them on dbsock's clock, under %.2f: latencies that short are not what it did",
				len(pb.coverage), p, c, MinCoverage)
		}
	}
	return b.gaps()
}

// gaps compares the paths' least gaps per op: the time an agent's span
// leaves uncovered per op does not depend on the route.
func (b *bounds) gaps() error {
	type pg struct {
		name    string
		gap, op float64
	}
	var ps []pg
	for name, pb := range b.paths {
		if len(pb.gap) >= minWindow {
			ps = append(ps, pg{name, slices.Min(pb.gap), median(pb.op)})
		}
	}
	slices.SortFunc(ps, func(a, b pg) int { return cmp.Compare(a.gap, b.gap) })
	for i := 1; i < len(ps); i++ {
		lo, hi := ps[0], ps[i]
		limit := float64(minGapSkew.Nanoseconds()) + maxGapSkew*min(lo.op, hi.op)
		if hi.gap-lo.gap > limit {
			return fmt.Errorf("it took at least %s more per op on %s than its latencies cover (the least of its last blocks) and %s on %s: an agent's own time per op does not depend on the route, so the latencies on %s are short by as much (%s at most is allowed: %s and %.0f%% of an op)",
				dur(hi.gap), hi.name, dur(lo.gap), lo.name, hi.name, dur(limit), minGapSkew, 100*maxGapSkew)
		}
	}
	return nil
}

// load weighs a closed-loop load of path p by its busiest connection.
func (b *bounds) load(p string, busiest sample) error {
	if !busiest.weighed() {
		return nil
	}
	pb := b.path(p)
	pb.coverage = push(pb.coverage, float64(busiest.sum)/float64(busiest.span))
	if len(pb.coverage) >= minWindow {
		if c := slices.Max(pb.coverage); c < MinLoadCoverage {
			return fmt.Errorf("the latencies of its busiest connection in its last %d loads on %s cover at best %.2f of the time it took for them on dbsock's clock, under %.2f: latencies that short are not what it did",
				len(pb.coverage), p, c, MinLoadCoverage)
		}
	}
	return nil
}

// repeat says whether a block's latencies (ns, of which ok succeeded)
// are another block's, in any order.
func (b *bounds) repeat(id string, ns []int64, ok int) error {
	if ok < minRepeatOps {
		return nil
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	h := fnv.New64a()
	var buf [8]byte
	for _, v := range s {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		_, _ = h.Write(buf[:])
	}
	k := h.Sum64()
	if b.seen == nil {
		b.seen = map[uint64]string{}
	}
	if prev, ok := b.seen[k]; ok {
		return fmt.Errorf("its %d latencies for %s are those it gave for %s: no two blocks take the same nanoseconds", len(ns), id, prev)
	}
	b.seen[k] = id
	return nil
}

// tail weighs a paced load of path p whose last op ended end after its
// T0, by the agent's account, and whose span on dbsock's clock was span;
// it returns the time dbsock takes for the load: the end, but no less
// than the span less the allowance.
func (b *bounds) tail(p string, end, span time.Duration) (time.Duration, error) {
	allow := tailAllowance + time.Duration(tailShare*float64(span))
	took := max(end, span-allow)
	if span < minBoundedSpan {
		return took, nil
	}
	pb := b.path(p)
	pb.tail = push(pb.tail, float64(span-end-tailAllowance)/float64(span))
	if len(pb.tail) >= minWindow {
		if least := slices.Min(pb.tail); least > maxTailShare {
			return 0, fmt.Errorf("by its own account its last op ended, in each of its last %d loads on %s, at least %.0f%% of the load's time on dbsock's clock (beyond %s) before its answer reached dbsock (the last: %s after the load began, %s before the answer): an agent says its ops kept a schedule that, by dbsock's clock, they did not keep",
				len(pb.tail), p, 100*least, tailAllowance, end.Round(time.Microsecond), (span - end).Round(time.Microsecond))
		}
	}
	return took, nil
}

func dur(ns float64) string {
	return time.Duration(ns).Round(10 * time.Nanosecond).String()
}

// boundLoad weighs a load's answer against the agent's span for it on
// dbsock's clock, and returns the time dbsock takes for the load: paced,
// its last op's end, within the tail of its answer (tail); in a closed
// loop, the span itself, its busiest connection's latencies covering
// enough of it (bounds.load).
func (c *conn) boundLoad(l Load, r LoadResult, span time.Duration) (time.Duration, error) {
	var end time.Duration
	busiest := sample{span: span}
	for _, cr := range r.Results {
		if len(cr.Errors) > 0 { // a failed op's time says nothing of a lookup's
			return span, nil
		}
	}
	for i, cr := range r.Results {
		var sum int64
		for _, v := range cr.Ns {
			sum += v
		}
		if sum > busiest.sum {
			busiest.sum, busiest.ops = sum, len(cr.Ns)
		}
		if n := len(cr.Ns); l.IntervalNs > 0 && n > 0 && len(cr.LagNs) == n && i < len(l.OffsetsNs) {
			end = max(end, time.Duration(l.OffsetsNs[i]+int64(n-1)*l.IntervalNs+cr.LagNs[n-1]+cr.Ns[n-1]))
		}
	}
	var err error
	took := span
	switch {
	case l.Warmup > 0: // its T0 came after its warm-up: the span says nothing of the ops' end
	case l.IntervalNs == 0:
		err = c.d.bounds.load(string(c.path)+c.scenarioSuffix(), busiest)
	default:
		took, err = c.d.bounds.tail(string(c.path)+c.scenarioSuffix(), end, span)
	}
	if err != nil {
		return 0, c.d.agent.fail(fmt.Errorf("%w: its load of %d connections on %s: %w", ErrUnseen, len(l.IDs), c.path, err))
	}
	return took, nil
}
