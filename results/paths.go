package results

import "github.com/dbsock/dbsock/drivers"

// A case's further paths (beyond TCP and Unix), each compared with TCP by
// the same paired method as Unix.

// PathSummary is one more path of a case: its pooled result, and how it
// compares with the baseline path (TCP) over the same block groups.
type PathSummary struct {
	Path     drivers.Transport `json:"path"`
	Baseline drivers.Transport `json:"baseline"`
	Side
	// SpeedupP50 is the median over block groups of the baseline's p50
	// over this path's (above 1: this path is faster), with its 95%
	// interval, over instances when there are several (InstanceSpeedups).
	SpeedupP50       float64   `json:"speedup_p50"`
	SpeedupP50CI     *Interval `json:"speedup_p50_ci,omitempty"`
	InstanceSpeedups []float64 `json:"instance_speedups,omitempty"`
	// PValue is the sign test, as Summary's; PValueHolm is it adjusted by
	// Holm's method over every comparison in the report.
	PValue      float64     `json:"p_value"`
	PValueHolm  float64     `json:"p_value_holm"`
	VerdictKind VerdictKind `json:"verdict_kind"`
	// Verdict is VerdictKind in words ("TCP6 faster: ...", "no
	// meaningful difference: ..."), as package reports writes it.
	Verdict string `json:"verdict"`
	// UnixGainP50 is what moving from this path to the Unix socket gains:
	// the median over block groups of this path's p50 over Unix's (above
	// 1: the socket is faster), by the same paired method and interval
	// as SpeedupP50; descriptive, outside Holm's adjustment.
	UnixGainP50   float64   `json:"unix_gain_p50,omitempty"`
	UnixGainP50CI *Interval `json:"unix_gain_p50_ci,omitempty"`
}

// comparison is how one path compares with the baseline over their
// paired blocks.
type comparison struct {
	p50, mean, pooled float64
	p50CI, meanCI     *Interval
	instances         []float64
	p                 float64
}

// compare estimates the speedup of path over base (base/path; above 1:
// path is faster) from their paired blocks pr: over the pairs of one
// instance, or over instances when there are several (Kalibera and
// Jones); with no complete pair, the pooled figures are all there is.
func compare(pr pairs, base, path Side) comparison {
	c := comparison{pooled: ratio(float64(base.Latency.P50), float64(path.Latency.P50))}
	c.p50, c.mean = medianRatio(pr.p50), medianRatio(pr.mean)
	if len(pr.p50) == 0 {
		c.p50, c.mean = c.pooled, ratio(base.Latency.Mean, path.Latency.Mean)
	}
	c.p50CI, c.meanCI = PairedSpeedup(pr.p50, pr.rounds), PairedSpeedup(pr.mean, pr.rounds)
	c.p = SignTest(logs(pr.p50))
	if len(pr.byInstance) > 1 {
		var p50, mean [][]float64
		for _, in := range pr.byInstance {
			p50, mean = append(p50, in.p50), append(mean, in.mean)
		}
		c.p50CI, c.instances, c.p = InstanceSpeedup(p50, pr.rounds)
		c.meanCI, _, _ = InstanceSpeedup(mean, pr.rounds)
	}
	if c.p50CI != nil {
		c.p50, c.mean = c.p50CI.Center, c.meanCI.Center
	}
	return c
}

// comparePath is path t of a case (its pooled result side) against TCP,
// and the Unix socket (unix) against it.
func comparePath(runs []*Run, tcp, unix Side, t drivers.Transport, side Side) PathSummary {
	c := compare(blockPairs(runs, drivers.TCP, t), tcp, side)
	ps := PathSummary{Path: t, Baseline: drivers.TCP, Side: side, SpeedupP50: c.p50, SpeedupP50CI: c.p50CI, InstanceSpeedups: c.instances, PValue: c.p}
	if tcp.N-tcp.Errors <= 0 || side.N-side.Errors <= 0 {
		ps.SpeedupP50, ps.SpeedupP50CI, ps.PValue = 0, nil, 1
	}
	if side.N-side.Errors > 0 && unix.N-unix.Errors > 0 {
		g := compare(blockPairs(runs, t, drivers.Unix), side, unix)
		ps.UnixGainP50, ps.UnixGainP50CI = g.p50, g.p50CI
	}
	return ps
}

// PathSide is one path of a case and its pooled result.
type PathSide struct {
	Path drivers.Transport
	Side Side
}

// Sides are every path a case measured with its pooled result: TCP, the
// Unix socket, then the further paths in the order they ran. A reader
// that must see every path (error rates, regressions) ranges over these
// rather than over the named fields.
func (s Summary) Sides() []PathSide {
	out := []PathSide{{drivers.TCP, s.TCP}, {drivers.Unix, s.Unix}}
	for _, p := range s.Paths {
		out = append(out, PathSide{p.Path, p.Side})
	}
	return out
}
