package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/dbsock/dbsock/drivers"
)

// Client stacks compared with each other. A run with several client
// stacks (--clients go,python,php) measures each stack's case on the same
// server instances, so each instance gives each stack its own speedup (the
// median of its paired block ratios, baseline over path) and the ratio of
// two stacks' speedups on that instance. The comparison is the median of
// those per-instance ratios with the distribution-free interval over
// instances (InstanceSpeedup, as for any comparison: Conover 1999, 3.2;
// Kalibera and Jones 2013) and the sign test over them. Only what is
// paired is compared: two stacks' absolute latencies were measured at
// different times (Go's inside dbsock's own process), so they are never
// divided by each other.

// MethodStacks names the stack comparisons' interval in reports and JSON.
const MethodStacks = "median over server instances of the ratio of two client stacks' per-instance speedups (each the median of its paired block ratios); distribution-free 95% CI from order statistics over instances (Conover 1999, 3.2; Kalibera and Jones 2013); Holm over the report's stack comparisons"

// StackComparison is one client stack's speedup of a path against the
// reference stack's (Go's drivers where the run measured them, else the
// first stack), for one case.
type StackComparison struct {
	// Case is the compared stack's case (Case.Stack is the stack, "" for
	// Go's drivers in dbsock).
	Case
	// Reference is the stack it is compared with ("" for Go's drivers).
	Reference string            `json:"reference"`
	Path      drivers.Transport `json:"path"`
	Baseline  drivers.Transport `json:"baseline"`
	// Speedup and ReferenceSpeedup are each stack's p50 speedup of Path
	// over Baseline: the median of its per-instance speedups over the
	// instances both stacks ran on.
	Speedup          float64 `json:"speedup_p50"`
	ReferenceSpeedup float64 `json:"reference_speedup_p50"`
	// Ratio is the median over server instances of Speedup's instance
	// value over ReferenceSpeedup's (above 1: the path gains more for
	// this stack), with its 95% interval over instances (nil with fewer
	// than MinInstances instances); InstanceRatios are the per-instance
	// ratios, in instance order.
	Ratio          float64   `json:"ratio"`
	RatioCI        *Interval `json:"ratio_ci,omitempty"`
	InstanceRatios []float64 `json:"instance_ratios,omitempty"`
	// PValue is the sign test of the per-instance ratios; PValueHolm is it
	// adjusted by Holm's method over the report's stack comparisons.
	PValue     float64 `json:"p_value"`
	PValueHolm float64 `json:"p_value_holm"`
	// VerdictKind reads the ratio's interval as Judge reads a speedup's:
	// UnixFaster means the path gains more for this stack, TCPFaster more
	// for the reference.
	VerdictKind VerdictKind `json:"verdict_kind"`
}

// StackName names a case's stack in words and thresholds: "go" for Go's
// drivers in dbsock.
func StackName(stack string) string {
	if stack == "" {
		return "go"
	}
	return stack
}

// instanceSpeedups are a case's per-instance speedups of path over base
// (exp of the median log paired ratio), by instance number.
func instanceSpeedups(runs []*Run, base, path drivers.Transport) map[int]float64 {
	byInstance := map[int][]*Run{}
	for _, run := range runs {
		byInstance[run.Instance] = append(byInstance[run.Instance], run)
	}
	out := map[int]float64{}
	for in, rs := range byInstance {
		ratios := blockPairs(rs, base, path).p50
		if len(ratios) == 0 {
			continue
		}
		l := make([]float64, 0, len(ratios))
		for _, r := range ratios {
			if !(r > 0) || math.IsInf(r, 0) {
				l = nil
				break
			}
			l = append(l, math.Log(r))
		}
		if len(l) > 0 {
			out[in] = math.Exp(Median(l))
		}
	}
	return out
}

// compareStacks sets r.Stacks: every stack of each case against the
// reference stack's, for every path the reference compares, then Holm's
// adjustment over them.
func (r *Report) compareStacks() {
	r.Stacks = nil
	runs := map[Case][]*Run{}
	for i := range r.Runs {
		runs[r.Runs[i].Case] = append(runs[r.Runs[i].Case], &r.Runs[i])
	}
	groups := map[Case][]*Summary{} // cases that differ only in their stack (and its mode)
	var order []Case
	for i := range r.Summary {
		k := r.Summary[i].Case
		k.Stack, k.Mode = "", "" // each stack's library speaks its own mode (resp2, resp3)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], &r.Summary[i])
	}
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		ref := g[max(slices.IndexFunc(g, func(s *Summary) bool { return s.Stack == "" }), 0)]
		for _, c := range ref.Comparisons {
			refSpeed := instanceSpeedups(runs[ref.Case], c.Baseline, c.Path)
			for _, s := range g {
				if s == ref || s.ComparisonOf(c.Path) == nil {
					continue
				}
				r.Stacks = append(r.Stacks, stackComparison(s.Case, ref.Stack, c, refSpeed, instanceSpeedups(runs[s.Case], c.Baseline, c.Path)))
			}
		}
	}
	var ps []float64
	for _, sc := range r.Stacks {
		ps = append(ps, sc.PValue)
	}
	for i, p := range Holm(ps) {
		sc := &r.Stacks[i]
		sc.PValueHolm = p
		sc.judge()
	}
}

// stackComparison compares one stack's per-instance speedups with the
// reference's over the instances both ran on.
func stackComparison(c Case, ref string, cmp Comparison, refSpeed, speed map[int]float64) StackComparison {
	sc := StackComparison{Case: c, Reference: ref, Path: cmp.Path, Baseline: cmp.Baseline, PValue: 1}
	var instances []int
	for in := range speed {
		if _, ok := refSpeed[in]; ok {
			instances = append(instances, in)
		}
	}
	slices.Sort(instances)
	var mine, theirs []float64
	var each [][]float64
	for _, in := range instances {
		mine, theirs = append(mine, speed[in]), append(theirs, refSpeed[in])
		sc.InstanceRatios = append(sc.InstanceRatios, speed[in]/refSpeed[in])
		each = append(each, []float64{speed[in] / refSpeed[in]})
	}
	if len(instances) == 0 {
		return sc
	}
	sc.Speedup, sc.ReferenceSpeedup = logMedian(mine), logMedian(theirs)
	sc.RatioCI, _, sc.PValue = InstanceSpeedup(each, 0)
	sc.Ratio = logMedian(sc.InstanceRatios)
	if sc.RatioCI != nil {
		sc.RatioCI.Pairs, sc.RatioCI.Method = 0, MethodStacks
		sc.Ratio = sc.RatioCI.Center
	}
	return sc
}

// logMedian is the median of xs taken on the log scale (for an even count,
// the geometric mean of the middle two).
func logMedian(xs []float64) float64 {
	return math.Exp(Median(logs(xs)))
}

// judge reads the ratio's interval as a speedup's.
func (sc *StackComparison) judge() {
	sc.VerdictKind = Judge(sc.RatioCI, sc.PValueHolm)
	if sc.RatioCI == nil && len(sc.InstanceRatios) > 1 {
		sc.VerdictKind = TooFewInstances
	}
}

// StacksOf are r's stack comparisons of target.
func (r *Report) StacksOf(target string) []StackComparison {
	var out []StackComparison
	for _, sc := range r.Stacks {
		if sc.Target == target {
			out = append(out, sc)
		}
	}
	return out
}

// StackRatio is the threshold metric of a stack comparison's ratio:
// TARGET@STACK.PATH.stack_ratio[.lo|.hi].
const StackRatio = "stack_ratio"

// evaluateStacks checks a stack_ratio threshold against every stack
// comparison of its target, stack (any but the reference's, when it names
// none) and path.
func evaluateStacks(r *Report, th Threshold) []ThresholdResult {
	var out []ThresholdResult
	for _, sc := range r.Stacks {
		if sc.Target != th.Target || string(sc.Path) != th.Side || th.Stack != "" && !th.ofStack(sc.Stack) {
			continue
		}
		actual := bound(sc.Ratio, sc.RatioCI, th.Bound)
		text := th.Side + "_" + StackRatio
		if th.Bound != "" {
			text += "." + th.Bound
		}
		res := ThresholdResult{Expr: th.Expr, Scenario: sc.Scenario, Stack: sc.Stack, OK: th.holds(actual)}
		if math.IsNaN(actual) {
			res.ActualText = text + ": no interval (too few server instances)"
		} else {
			res.Actual = &actual
			res.ActualText = fmt.Sprintf("%s %.4g (%s over %s)", text, actual, StackName(sc.Stack), StackName(sc.Reference))
		}
		if why := r.Incomplete(th.Target); why != "" {
			res.OK, res.ActualText = false, res.ActualText+"; not judged: the run did not finish ("+why+")"
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		what := th.Target
		if th.Stack != "" {
			what += "@" + th.Stack
		}
		out = append(out, ThresholdResult{Expr: th.Expr, ActualText: "no stack comparison of " + what + " over " + th.Side +
			": it needs the target measured from several client stacks (--clients go,python,...), the stack not the reference (" + StackName("") + ")"})
	}
	return out
}
