package results

import (
	"slices"

	"github.com/dbsock/dbsock/drivers"
)

// A case's result is its sides, one per path, and its comparisons: every
// path against the baseline path (DefaultBaseline, TCP on 127.0.0.1,
// unless Config.Baseline names another), each by the same paired method.

// PathSide is one path of a case and its pooled result.
type PathSide struct {
	Path drivers.Transport `json:"path"`
	Side
}

// Comparison is one path of a case against the baseline path, over their
// paired blocks.
type Comparison struct {
	Path     drivers.Transport `json:"path"`
	Baseline drivers.Transport `json:"baseline"`
	// SpeedupP50 is the median over block groups of the baseline's p50
	// over this path's (above 1: this path is faster), with its 95%
	// interval, over instances when there are several (InstanceSpeedups);
	// SpeedupMean is the same for the mean. Both are 0 when every op
	// failed on one of the two paths.
	SpeedupP50   float64   `json:"speedup_p50"`
	SpeedupP50CI *Interval `json:"speedup_p50_ci,omitempty"`
	SpeedupMean  float64   `json:"speedup_mean"`
	// SpeedupMeanCI is the mean's interval, as SpeedupP50CI.
	SpeedupMeanCI *Interval `json:"speedup_mean_ci,omitempty"`
	// SpeedupP50Pooled is the baseline's pooled p50 over this path's.
	SpeedupP50Pooled float64 `json:"speedup_p50_pooled"`
	// InstanceSpeedups are the p50 speedups of each server instance, when
	// the case ran on more than one: then the intervals are over
	// instances (MethodInstances).
	InstanceSpeedups []float64 `json:"instance_speedups,omitempty"`
	// PValue is the two-sided sign test of "the p50 ratio is as often
	// above 1 as below"; PValueHolm is it adjusted by Holm's method over
	// every comparison in the report.
	PValue     float64 `json:"p_value"`
	PValueHolm float64 `json:"p_value_holm"`
	// VerdictKind is what the p50 interval says (see Judge).
	VerdictKind VerdictKind `json:"verdict_kind"`
	// Verdict is VerdictKind in words, with the interval, as package
	// reports writes it when it renders the report.
	Verdict string `json:"verdict"`
	// CPUSaving is the baseline's CPU per op minus this path's.
	CPUSaving *CPUSaving `json:"cpu_saving,omitempty"`
	// UnixGainP50 is what moving from this path to the Unix socket gains:
	// the median over block groups of this path's p50 over Unix's (above
	// 1: the socket is faster), by the same paired method and interval
	// as SpeedupP50; descriptive, outside Holm's adjustment. Absent for
	// the socket itself.
	UnixGainP50   float64   `json:"unix_gain_p50,omitempty"`
	UnixGainP50CI *Interval `json:"unix_gain_p50_ci,omitempty"`
	// Tail and Capacity compare the p99 and the server's CPU per op by the
	// same paired method (atload.go); nil where the blocks lack them.
	Tail     *Paired `json:"tail,omitempty"`
	Capacity *Paired `json:"capacity,omitempty"`
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

// succeeded says whether a side has any successful op to compare.
func succeeded(s Side) bool { return s.N-s.Errors > 0 }

// compareSides is the one place a case's comparisons are made: every side
// but the baseline against the baseline, paired block group by block
// group (and the Unix socket against each further path, descriptively).
// Verdicts come later, from judge, once every comparison of the report is
// known. nil when the case has no baseline side.
func compareSides(runs []*Run, sides []PathSide, base drivers.Transport) []Comparison {
	b, ok := sideOf(sides, base)
	if !ok {
		return nil
	}
	sock := Socket()
	unix, hasUnix := sideOf(sides, sock)
	var out []Comparison
	for _, ps := range sides {
		if ps.Path == base {
			continue
		}
		pr := blockPairs(runs, base, ps.Path)
		c := compare(pr, b, ps.Side)
		cmp := Comparison{Path: ps.Path, Baseline: base, SpeedupP50: c.p50, SpeedupP50CI: c.p50CI, SpeedupMean: c.mean, SpeedupMeanCI: c.meanCI,
			SpeedupP50Pooled: c.pooled, InstanceSpeedups: c.instances, PValue: c.p, CPUSaving: cpuSaving(b.CPU, ps.CPU),
			Tail: pr.tail(), Capacity: pr.capacity()}
		if !succeeded(b) || !succeeded(ps.Side) {
			// Latencies of nothing: no speedup, no interval.
			cmp.SpeedupP50, cmp.SpeedupMean, cmp.SpeedupP50Pooled = 0, 0, 0
			cmp.SpeedupP50CI, cmp.SpeedupMeanCI, cmp.PValue = nil, nil, 1
		}
		if ps.Path != sock && base != sock && hasUnix && succeeded(ps.Side) && succeeded(unix) {
			g := compare(blockPairs(runs, ps.Path, sock), ps.Side, unix)
			cmp.UnixGainP50, cmp.UnixGainP50CI = g.p50, g.p50CI
		}
		out = append(out, cmp)
	}
	return out
}

// judge sets c's verdict from its interval and its Holm-adjusted p-value;
// base is the baseline's side.
func (c *Comparison) judge(base, path Side) {
	c.VerdictKind = Judge(c.SpeedupP50CI, c.PValueHolm)
	switch {
	case !succeeded(base) || !succeeded(path):
		c.VerdictKind = NoResult
	case base.Generator != nil && base.Generator.FellBehind, path.Generator != nil && path.Generator.FellBehind:
		c.VerdictKind = FellBehind
	case c.SpeedupP50CI == nil && len(c.InstanceSpeedups) > 1:
		c.VerdictKind = TooFewInstances
	case c.VerdictKind == UnixFaster && c.Path != Socket():
		c.VerdictKind = PathFaster
	case c.VerdictKind == TCPFaster && c.Baseline != DefaultBaseline():
		c.VerdictKind = BaselineFaster
	}
}

// sideOf is path t's side among sides.
func sideOf(sides []PathSide, t drivers.Transport) (Side, bool) {
	i := slices.IndexFunc(sides, func(ps PathSide) bool { return ps.Path == t })
	if i < 0 {
		return Side{}, false
	}
	return sides[i].Side, true
}

// SideOf is path t's pooled result in the case, and whether it measured t.
func (s *Summary) SideOf(t drivers.Transport) (Side, bool) { return sideOf(s.Sides, t) }

// Side is path t's pooled result in the case; the zero Side when the case
// did not measure t.
func (s *Summary) Side(t drivers.Transport) Side {
	side, _ := s.SideOf(t)
	return side
}

// PathsOf are the paths target's cases measured ("": every target's), in
// the order of their sides: the default baseline, the socket, then the
// further paths in the order they ran.
func (r *Report) PathsOf(target string) []drivers.Transport {
	var out []drivers.Transport
	for _, s := range r.Summary {
		for _, side := range s.Sides {
			if (target == "" || s.Target == target) && !slices.Contains(out, side.Path) {
				out = append(out, side.Path)
			}
		}
	}
	return out
}

// ComparisonOf is path t's comparison with the baseline in the case; nil
// when there is none (t is the baseline, or was not measured).
func (s *Summary) ComparisonOf(t drivers.Transport) *Comparison {
	for i := range s.Comparisons {
		if s.Comparisons[i].Path == t {
			return &s.Comparisons[i]
		}
	}
	return nil
}

// Against is path t's comparison with the case's baseline: the zero
// Comparison (no speedup, no interval, no verdict) when there is none.
// s.Against(dbsock.Unix) is the socket's.
func (s *Summary) Against(t drivers.Transport) Comparison {
	if c := s.ComparisonOf(t); c != nil {
		return *c
	}
	return Comparison{}
}

// Baseline is the path the case's comparisons are against: theirs, or,
// in a case with none, its first side ("" with no side either).
func (s *Summary) Baseline() drivers.Transport {
	if len(s.Comparisons) > 0 {
		return s.Comparisons[0].Baseline
	}
	if len(s.Sides) > 0 {
		return s.Sides[0].Path
	}
	return ""
}

// DefaultBaseline is the path the others are compared with when a run
// names none: the first of drivers.PathTable, 127.0.0.1 TCP.
func DefaultBaseline() drivers.Transport { return drivers.PathTable[0].Path }

// Socket is the server's Unix socket, the path reports call "the socket":
// the one of drivers.PathTable whose clients dial a "unix" network.
func Socket() drivers.Transport {
	for _, p := range drivers.PathTable {
		if p.Network == "unix" {
			return p.Path
		}
	}
	return ""
}

// orderSides puts the sides in the order reports list them: the default
// baseline (TCP), the socket, then the further paths in the order they ran.
func orderSides(sides []PathSide) {
	rank := func(t drivers.Transport) int {
		switch t {
		case DefaultBaseline():
			return 0
		case Socket():
			return 1
		}
		return 2
	}
	slices.SortStableFunc(sides, func(a, b PathSide) int { return rank(a.Path) - rank(b.Path) })
}

// SetVerdicts writes every comparison's verdict in words, as words(s, c)
// puts it, where c has a kind (reports read before kinds existed keep
// their words).
func (r *Report) SetVerdicts(words func(s *Summary, c *Comparison) string) {
	for i := range r.Summary {
		s := &r.Summary[i]
		for j := range s.Comparisons {
			if c := &s.Comparisons[j]; c.VerdictKind != "" {
				c.Verdict = words(s, c)
			}
		}
	}
}

// ComparisonCount is how many comparisons Holm's adjustment is over: every
// comparison of every case.
func (r *Report) ComparisonCount() int {
	n := 0
	for _, s := range r.Summary {
		n += len(s.Comparisons)
	}
	return n
}
