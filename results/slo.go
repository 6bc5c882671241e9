package results

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// An objective (--slo 'p99<2ms') asks, over a --rate sweep, the question
// load tools answer with a latency-throughput curve (YCSB#425,
// heapothesys): the highest offered rate each path holds within it. A
// path holds a rate when its generator kept the schedule there (no side
// fell behind: the achieved rate within MinAchieved of the offered, the
// schedule lag within LagBound), at most ErrorShare of its ops failed,
// and the path's pooled latency at the objective's percentile, counted
// from each op's intended start, is within the limit. Its headroom is the
// ratio of two paths' highest rates: a lower bound where the path held
// every rate measured, an upper one where the baseline did.

// SLO is a latency objective: a percentile's latency at most Limit.
type SLO struct {
	// Percentile is "p50", "p99" or "p99.9".
	Percentile string `json:"percentile"`
	LimitNs    int64  `json:"limit_ns"`
}

var sloSyntax = regexp.MustCompile(`^(p50|p99|p99\.9)\s*<=?\s*([0-9]+(?:\.[0-9]+)?)\s*(µs|us|ms)$`)

// The limits an objective may set: 1 µs to a minute.
const (
	MinSLOLimit = time.Microsecond
	MaxSLOLimit = time.Minute
)

// ParseSLO reads an objective such as "p99<2ms", "p50<=300us" or
// "p99.9<10ms".
func ParseSLO(s string) (SLO, error) {
	m := sloSyntax.FindStringSubmatch(s)
	if m == nil {
		return SLO{}, fmt.Errorf("%q is not an objective such as p99<2ms (p50, p99 or p99.9, then < and a latency in µs, us or ms)", s)
	}
	v, _ := strconv.ParseFloat(m[2], 64)
	unit := time.Microsecond
	if m[3] == "ms" {
		unit = time.Millisecond
	}
	// The bounds are checked before the limit becomes a Duration, which
	// a number of 20 digits would overflow; the limit is worded as given.
	limit := v * float64(unit)
	if limit < float64(MinSLOLimit) || limit > float64(MaxSLOLimit) {
		return SLO{}, fmt.Errorf("%q: the limit %s%s is out of range; accepted: 1µs to 1m", s, m[2], m[3])
	}
	return SLO{Percentile: m[1], LimitNs: int64(math.Round(limit))}, nil
}

// String is the objective as it is written: "p99 < 2ms".
func (o SLO) String() string { return o.Percentile + " < " + time.Duration(o.LimitNs).String() }

// Of is l's latency at the objective's percentile.
func (o SLO) Of(l Latency) int64 {
	switch o.Percentile {
	case "p50":
		return l.P50
	case "p99.9":
		return l.P999
	}
	return l.P99
}

// MaxSLOErrorShare is the largest share of failed ops at which a path
// can hold an objective: an op that failed is not within any latency
// limit (errors are not latency: the percentiles are of the ops that
// succeeded), so a path holds a rate only when its failed ops are at most
// this share, or the objective's own share beyond its percentile where
// that is smaller (0.1% for p99.9).
const MaxSLOErrorShare = 0.01

// ErrorShare is the largest share of failed ops at which a path holds o:
// MaxSLOErrorShare, or the share of ops o's percentile leaves above it
// where that is smaller.
func (o SLO) ErrorShare() float64 {
	if o.Percentile == "p99.9" {
		return 0.001
	}
	return MaxSLOErrorShare
}

// Holds says whether side s, at its case's rate, kept the schedule and
// the objective: its generator did not fall behind, at most ErrorShare
// of its ops failed, and its latency at the percentile is within the
// limit.
func (o SLO) Holds(s Side) bool {
	g := s.Generator
	return g != nil && !g.FellBehind && s.N-s.Errors > 0 && float64(s.Errors) <= o.ErrorShare()*float64(s.N) &&
		o.Of(s.Latency) <= o.LimitNs
}

// Capacity is one path's highest rate within an objective, in one group
// of cases that differ by their rate only.
type Capacity struct {
	Path drivers.Transport `json:"path"`
	// HighestRate is the highest offered rate the path held with every
	// lower rate measured held too; 0 when it did not hold the lowest. A
	// rate held above one missed is not counted: the miss below says the
	// path does not hold that load reliably (a capacity is the load up to
	// which it holds).
	HighestRate float64 `json:"highest_rate"`
	// HeldAbove is the highest rate held above a rate missed (0: none),
	// given beside HighestRate so that a reader sees the pattern.
	HeldAbove float64 `json:"held_above,omitempty"`
	// AtLeast says that the path held every rate measured: its highest
	// rate within the objective is HighestRate or more, and no headroom
	// can be read from it.
	AtLeast bool `json:"at_least,omitempty"`
	// Rates are the offered rates measured, in order, and Held which of
	// them the path held.
	Rates []float64 `json:"rates"`
	Held  []bool    `json:"held"`
}

// SLOResult is a group of cases measured at several rates (the same
// target, stack, scenario, workers, value size and depth) against the
// run's objective.
type SLOResult struct {
	Case       Case       `json:"case"` // the group's case, its rate 0
	Capacities []Capacity `json:"capacities"`
	// Headroom is each further path's highest rate over the baseline's
	// (above 1: the path holds more load within the objective); absent
	// where either held no rate, or both held every rate measured.
	Headroom map[drivers.Transport]float64 `json:"headroom,omitempty"`
	// HeadroomAtLeast marks a headroom that is a lower bound: its path
	// held every rate measured (AtLeast), so its own highest rate may be
	// higher. HeadroomAtMost marks one that is an upper bound: the
	// baseline held every rate measured.
	HeadroomAtLeast map[drivers.Transport]bool `json:"headroom_at_least,omitempty"`
	HeadroomAtMost  map[drivers.Transport]bool `json:"headroom_at_most,omitempty"`
}

// EvaluateSLO groups the report's cases by everything but their rate and
// gives each group's highest rate within slo per path. base is the
// baseline path.
func EvaluateSLO(summary []Summary, slo SLO, base drivers.Transport) []SLOResult {
	var out []SLOResult
	index := map[Case]int{}
	for _, s := range summary {
		if s.Rate <= 0 {
			continue
		}
		key := s.Case
		key.Rate = 0
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, SLOResult{Case: key})
		}
		r := &out[i]
		for _, ps := range s.Sides {
			j := slices.IndexFunc(r.Capacities, func(c Capacity) bool { return c.Path == ps.Path })
			if j < 0 {
				j = len(r.Capacities)
				r.Capacities = append(r.Capacities, Capacity{Path: ps.Path})
			}
			c := &r.Capacities[j]
			c.Rates, c.Held = append(c.Rates, s.Rate), append(c.Held, slo.Holds(ps.Side))
		}
	}
	for i := range out {
		out[i].finish(base)
	}
	return out
}

// finish orders each path's rates, finds its highest held rate and the
// headroom of each path over base.
func (r *SLOResult) finish(base drivers.Transport) {
	var baseRate float64
	for i := range r.Capacities {
		c := &r.Capacities[i]
		order := make([]int, len(c.Rates))
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(a, b int) int { return int(math.Copysign(1, c.Rates[a]-c.Rates[b])) })
		rates, held := make([]float64, len(order)), make([]bool, len(order))
		missed := false
		for k, o := range order {
			rates[k], held[k] = c.Rates[o], c.Held[o]
			switch {
			case !held[k]:
				missed = true
			case missed:
				c.HeldAbove = rates[k]
			default:
				c.HighestRate = rates[k]
			}
		}
		c.Rates, c.Held = rates, held
		c.AtLeast = len(held) > 0 && !slices.Contains(held, false)
		if c.Path == base {
			baseRate = c.HighestRate
		}
	}
	baseAtLeast := slices.ContainsFunc(r.Capacities, func(c Capacity) bool { return c.Path == base && c.AtLeast })
	for _, c := range r.Capacities {
		if c.Path == base || baseRate <= 0 || c.HighestRate <= 0 || (c.AtLeast && baseAtLeast) {
			continue // a path that held every rate against a baseline that did too: no ratio to read
		}
		if r.Headroom == nil {
			r.Headroom = map[drivers.Transport]float64{}
		}
		r.Headroom[c.Path] = c.HighestRate / baseRate
		switch {
		case c.AtLeast: // its own highest rate may be higher: so may the ratio
			r.HeadroomAtLeast = setFlag(r.HeadroomAtLeast, c.Path)
		case baseAtLeast: // the baseline's may be higher: the ratio lower
			r.HeadroomAtMost = setFlag(r.HeadroomAtMost, c.Path)
		}
	}
}

// setFlag is m with path set (m made where nil).
func setFlag(m map[drivers.Transport]bool, path drivers.Transport) map[drivers.Transport]bool {
	if m == nil {
		m = map[drivers.Transport]bool{}
	}
	m[path] = true
	return m
}
