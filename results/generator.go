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
// fell behind in. The lateness leaves out what the schedule lag also
// counts, an op's wait for the op before it on the same connection: that
// wait is the server's slowness (queueing), which the latencies from the
// intended start report, and no fault of the generator's.
const (
	MinAchieved = 0.99
	LagBound    = time.Millisecond
)

// Generator is how an open loop kept its schedule over a run's (or a
// side's) timed blocks.
type Generator struct {
	// OfferedRate is the rate asked for, ops/s over the side's workers.
	OfferedRate float64 `json:"offered_rate"`
	// AchievedRate is the lowest block's: its ops over its wall time.
	AchievedRate float64 `json:"achieved_rate"`
	// LagP50Ns and LagP99Ns are the schedule lag (each op's actual start
	// minus its intended start, as pgbench's --rate counts it: the
	// generator's lateness and any wait for the op before it on the same
	// connection), pooled over the blocks: the p50 of every op, and the
	// highest block p99.
	LagP50Ns int64 `json:"lag_p50_ns"`
	LagP99Ns int64 `json:"lag_p99_ns"`
	// LagMeanNs is the mean schedule lag over Ops ops (pgbench's
	// "schedule lag" average is this figure).
	LagMeanNs float64 `json:"lag_mean_ns"`
	Ops       int64   `json:"ops"`
	// LateP99Ns is the highest block p99 of the generator's own lateness:
	// each op's actual start minus when it could start (its intended
	// start, or the end of the op before it on the same connection,
	// whichever came later). 0 in files from before it was kept: then
	// LagP99Ns stands for it.
	LateP99Ns int64 `json:"late_p99_ns,omitempty"`
	// FellBehind says that a block's achieved rate or lag missed its bound.
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
		rate := 0.0
		if b.ElapsedNs > 0 {
			rate = float64(b.N) / (float64(b.ElapsedNs) / 1e9)
		}
		if i == 0 || rate < g.AchievedRate {
			g.AchievedRate = rate
		}
		g.LagP99Ns = max(g.LagP99Ns, b.LagP99Ns)
		g.LateP99Ns = max(g.LateP99Ns, b.LateP99Ns)
	}
	g.FellBehind = g.behind()
	return g
}

func (g *Generator) behind() bool {
	late := g.LateP99Ns
	if late == 0 {
		late = g.LagP99Ns
	}
	return g.AchievedRate < MinAchieved*g.OfferedRate || time.Duration(late) > LagBound
}

// Pool is g and o together (either may be nil): the lowest achieved rate,
// the highest lag p99, the higher lag p50.
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
	p.AchievedRate = min(p.AchievedRate, o.AchievedRate)
	p.LagP50Ns, p.LagP99Ns, p.LateP99Ns = max(p.LagP50Ns, o.LagP50Ns), max(p.LagP99Ns, o.LagP99Ns), max(p.LateP99Ns, o.LateP99Ns)
	p.FellBehind = p.FellBehind || o.FellBehind || p.behind()
	return &p
}
