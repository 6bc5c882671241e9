package results

import "time"

// An open loop (a run at --rate) times each op from when it was due, so
// its latencies are the server's only while the generator keeps its
// schedule: ops start when they are due, and as many as were offered.
// Generator is how well it kept it; a side whose generator fell behind
// names no winner (VerdictKind FellBehind), as HttpArena treats an entry
// whose achieved rate falls short of the offered one, and pgbench reports
// its "schedule lag".

// The generator's bounds: a block whose achieved rate is under
// MinAchieved of the offered one, or in which the generator's own
// lateness (LateP99Ns) has a p99 over LagBound, is a block the generator
// fell behind in; a side whose generator fell behind in more than
// MaxBehindShare of its blocks is one where the generator fell behind. The
// lateness leaves out what the schedule lag also counts, an op's wait for
// the op before it on the same connection: that wait is the server's
// slowness (queueing), which the latencies from the intended start
// report, and no fault of the generator's. A block or two of a noisy
// machine (another process on the client's CPU) moves no median of paired
// ratios; more than one in twenty is the generator's, not the route's,
// story.
const (
	MinAchieved    = 0.99
	LagBound       = time.Millisecond
	MaxBehindShare = 0.05
)

// Generator is how an open loop kept its schedule over a run's (or a
// side's) timed blocks.
type Generator struct {
	// OfferedRate is the rate asked for, ops/s over the side's workers.
	OfferedRate float64 `json:"offered_rate"`
	// AchievedRate is the rate reached over the timed blocks: their ops
	// over their wall time; LowestRate the lowest block's.
	AchievedRate float64 `json:"achieved_rate"`
	LowestRate   float64 `json:"lowest_rate"`
	// LagP50Ns and LagP99Ns are the schedule lag (each op's actual start
	// minus its intended start, as pgbench's --rate counts it: the
	// generator's lateness and any wait for the op before it on the same
	// connection), pooled over the blocks: the p50 of every op, and the
	// highest block p99.
	LagP50Ns int64 `json:"lag_p50_ns"`
	LagP99Ns int64 `json:"lag_p99_ns"`
	// LagMeanNs is the mean schedule lag over Ops ops (pgbench's
	// "schedule lag" average is this figure); BlockNs is the blocks' wall
	// time.
	LagMeanNs float64 `json:"lag_mean_ns"`
	Ops       int64   `json:"ops"`
	BlockNs   int64   `json:"block_ns"`
	// LateP99Ns is the highest block p99 of the generator's own lateness:
	// each op's actual start minus when it could start (its intended
	// start, or the end of the op before it on the same connection,
	// whichever came later). 0 in files from before it was kept: then
	// LagP99Ns stands for it.
	LateP99Ns int64 `json:"late_p99_ns,omitempty"`
	// Blocks counts the timed blocks, BlocksBehind those the generator
	// fell behind in.
	Blocks       int `json:"blocks"`
	BlocksBehind int `json:"blocks_behind"`
	// FellBehind says that the generator fell behind in more than
	// MaxBehindShare of the blocks.
	FellBehind bool `json:"fell_behind"`
}

// NewGenerator is an open loop's account of blocks at offered ops/s; lag
// pools every op's schedule lag. nil for a closed loop (offered 0).
func NewGenerator(offered float64, blocks []Block, lag Latency) *Generator {
	if offered <= 0 {
		return nil
	}
	g := &Generator{OfferedRate: offered, LagP50Ns: lag.P50, LagMeanNs: lag.Mean}
	for i, b := range blocks {
		g.Ops += b.N
		g.BlockNs += b.ElapsedNs
		rate := 0.0
		if b.ElapsedNs > 0 {
			rate = float64(b.N) / (float64(b.ElapsedNs) / 1e9)
		}
		if i == 0 || rate < g.LowestRate {
			g.LowestRate = rate
		}
		g.LagP99Ns = max(g.LagP99Ns, b.LagP99Ns)
		g.LateP99Ns = max(g.LateP99Ns, b.LateP99Ns)
		late := b.LateP99Ns
		if late == 0 {
			late = b.LagP99Ns // a file from before the lateness was kept
		}
		g.Blocks++
		if rate < MinAchieved*offered || time.Duration(late) > LagBound {
			g.BlocksBehind++
		}
	}
	g.finish()
	return g
}

// finish sets the rate reached and whether the generator fell behind.
func (g *Generator) finish() {
	if g.BlockNs > 0 {
		g.AchievedRate = float64(g.Ops) / (float64(g.BlockNs) / 1e9)
	}
	g.FellBehind = float64(g.BlocksBehind) > MaxBehindShare*float64(g.Blocks)
}

// Pool is g and o together (either may be nil): their ops and blocks, the
// lowest block rate, the highest lag p99 and lateness p99, the higher lag
// p50, the mean lag weighted by ops.
func (g *Generator) Pool(o *Generator) *Generator {
	switch {
	case o == nil:
		return g
	case g == nil:
		c := *o
		return &c
	}
	p := *g
	if n := g.Ops + o.Ops; n > 0 {
		p.LagMeanNs = (g.LagMeanNs*float64(g.Ops) + o.LagMeanNs*float64(o.Ops)) / float64(n)
	}
	p.Ops += o.Ops
	p.BlockNs += o.BlockNs
	p.Blocks += o.Blocks
	p.BlocksBehind += o.BlocksBehind
	p.LowestRate = min(p.LowestRate, o.LowestRate)
	p.LagP50Ns, p.LagP99Ns, p.LateP99Ns = max(p.LagP50Ns, o.LagP50Ns), max(p.LagP99Ns, o.LagP99Ns), max(p.LateP99Ns, o.LateP99Ns)
	p.finish()
	return &p
}
