package results

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// What a report file's figures must agree with. Every figure dbsock
// derives from others in the same file is derived again when the file is
// read, by the code the run used: each run's generator from its blocks,
// each side's generator from its runs', each case's comparisons (their
// p99 and capacity figures, Holm-adjusted p-values and verdicts) from its
// blocks, p-values, intervals and sides, the objectives from the cases, the
// stack comparisons from the runs, and each threshold's result from the
// cases it names. A file whose stored figure differs is refused, naming
// the field: it claims what its own data does not say. Words are not
// compared: a comparison's verdict in words is written again whenever a
// report is rendered, and a threshold's result in words is written again
// here.

// derived checks every figure of r that dbsock derives from r's own data
// (v1: a schema version 1 report).
func (c *checker) derived(r *Report, v1 bool) {
	if c.err != nil {
		return
	}
	c.generators(r)
	c.comparisons(r, v1)
	c.objectives(r)
	c.stacks(r)
	c.thresholds(r)
}

// agree refuses field when stored, as JSON, is not derived, what dbsock
// derives for it from the file's own from (runs, blocks, cases).
func (c *checker) agree(field string, stored, derived any, from string) {
	if c.err != nil {
		return
	}
	a, errA := asJSON(stored)
	b, errB := asJSON(derived)
	if errA != nil || errB != nil {
		c.failf(field, "cannot be compared with what the file's own %s give (%v)", from, cmp.Or(errA, errB))
		return
	}
	where, got, want, differs := firstDiff(field, a, b)
	if !differs {
		return
	}
	switch {
	case got == nil:
		c.failf(where, "is absent, where the file's own %s give %s", from, shortJSON(want))
	case want == nil:
		c.failf(where, "is %s, where the file's own %s give none", shortJSON(got), from)
	default:
		if ga, ok := got.([]any); ok {
			if wa, ok := want.([]any); ok {
				c.failf(where, "holds %d, where the file's own %s give %d", len(ga), from, len(wa))
				return
			}
		}
		c.failf(where, "is %s, where the file's own %s give %s", shortJSON(got), from, shortJSON(want))
	}
}

// asJSON is v as JSON decodes it into any, numbers kept as written.
func asJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

// firstDiff is the first field under path, in the order of JSON's keys
// sorted, where a and b differ, and their values there (nil where one is
// absent; both lists where their lengths differ).
func firstDiff(path string, a, b any) (field string, got, want any, differs bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path, a, b, true
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if f, g, w, d := firstDiff(path+"."+k, x[k], y[k]); d {
				return f, g, w, d
			}
		}
		return "", nil, nil, false
	case []any:
		y, ok := b.([]any)
		if !ok {
			return path, a, b, true
		}
		for i := range min(len(x), len(y)) {
			if f, g, w, d := firstDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d {
				return f, g, w, d
			}
		}
		if len(x) != len(y) {
			return path, x, y, true
		}
		return "", nil, nil, false
	}
	if a != b {
		return path, a, b, true
	}
	return "", nil, nil, false
}

// shortJSON is v as compact JSON (strings quoted and escaped), cut to a
// length that fits an error line.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	const most = 80
	if len(b) > most {
		return strings.ToValidUTF8(string(b[:most]), "") + "…"
	}
	return string(b)
}

// generators checks each run's generator against its blocks, and each
// side's against its runs' pooled.
func (c *checker) generators(r *Report) {
	for i := range r.Runs {
		run := &r.Runs[i]
		g := run.Generator
		if g == nil {
			continue
		}
		field := fmt.Sprintf("runs[%d].generator", i)
		if run.Rate <= 0 {
			c.failf(field, "is given for a closed-loop run (rate 0), whose ops have no schedule")
			return
		}
		if g.OfferedRate != run.Rate {
			c.failf(field+".offered_rate", "is %g, where the run's rate is %g", g.OfferedRate, run.Rate)
			return
		}
		c.between(field+".lag_p50_ns", float64(g.LagP50Ns), 0, float64(MaxLatencyNs))
		c.between(field+".lag_mean_ns", g.LagMeanNs, 0, float64(MaxLatencyNs))
		c.agree(field, g, NewGenerator(g.OfferedRate, run.Blocks, Latency{P50: g.LagP50Ns, Mean: g.LagMeanNs}), "blocks")
	}
	for i := range r.Summary {
		s := &r.Summary[i]
		for j, side := range s.Sides {
			var pooled *Generator
			for k := range r.Runs {
				if run := &r.Runs[k]; run.Case == s.Case && run.Transport == side.Path {
					pooled = pooled.Pool(run.Generator)
				}
			}
			c.agree(fmt.Sprintf("summary[%d].sides[%d].generator", i, j), side.Generator, pooled, "runs")
		}
	}
}

// baseline is the path r's cases are compared with.
func (r *Report) baseline() drivers.Transport {
	if r.Config.Baseline != "" {
		return r.Config.Baseline
	}
	return DefaultBaseline()
}

// comparisons checks each case's comparisons: their p99 and capacity
// figures against those the case's blocks give (where the file has them:
// a file from before they were kept has none), and, but in a v1 file
// (whose p-values and verdicts an older dbsock's rules gave), their
// Holm-adjusted p-values against the file's p-values and their verdicts
// against their intervals and sides, as Summarize judges them.
func (c *checker) comparisons(r *Report, v1 bool) {
	runs := map[Case][]*Run{}
	for i := range r.Runs {
		runs[r.Runs[i].Case] = append(runs[r.Runs[i].Case], &r.Runs[i])
	}
	var ps []float64
	for i := range r.Summary {
		s := &r.Summary[i]
		for j := range s.Comparisons {
			cmp := &s.Comparisons[j]
			ps = append(ps, cmp.PValue)
			field := fmt.Sprintf("summary[%d].comparisons[%d]", i, j)
			pr := blockPairs(runs[s.Case], cmp.Baseline, cmp.Path)
			if cmp.Tail != nil {
				c.agree(field+".tail", cmp.Tail, pr.tail(), "blocks")
			}
			if cmp.Capacity != nil {
				c.agree(field+".capacity", cmp.Capacity, pr.capacity(), "blocks")
			}
		}
	}
	if v1 {
		return
	}
	adj, k := Holm(ps), 0
	for i := range r.Summary {
		s := &r.Summary[i]
		for j := range s.Comparisons {
			stored, d := &s.Comparisons[j], s.Comparisons[j]
			field := fmt.Sprintf("summary[%d].comparisons[%d]", i, j)
			d.PValueHolm, k = adj[k], k+1
			c.agree(field+".p_value_holm", stored.PValueHolm, d.PValueHolm, "p-values")
			base, _ := s.SideOf(d.Baseline)
			path, _ := s.SideOf(d.Path)
			d.judge(base, path)
			c.agree(field+".verdict_kind", stored.VerdictKind, d.VerdictKind, "intervals and sides")
		}
	}
}

// objectives checks the objectives against those the cases give under the
// run's objective (none without one).
func (c *checker) objectives(r *Report) {
	o := r.Config.SLO
	if o == nil {
		if len(r.Objectives) > 0 {
			c.failf("objectives", "holds %d, where the run had no objective (config.slo is absent)", len(r.Objectives))
		}
		return
	}
	derived := EvaluateSLO(r.Summary, *o, r.baseline())
	if len(r.Objectives) == 0 && len(derived) == 0 {
		return
	}
	c.agree("objectives", r.Objectives, derived, "cases")
}

// stacks checks the stack comparisons against those the runs give.
func (c *checker) stacks(r *Report) {
	cp := &Report{Runs: r.Runs, Summary: r.Summary}
	cp.compareStacks()
	if len(r.Stacks) == 0 && len(cp.Stacks) == 0 {
		return
	}
	c.agree("stacks", r.Stacks, cp.Stacks, "runs")
}

// thresholds checks each threshold's results against those its
// expression gives over the file's cases.
func (c *checker) thresholds(r *Report) {
	for k := 0; k < len(r.Thresholds) && c.err == nil; {
		field := fmt.Sprintf("thresholds[%d]", k)
		th, err := Parse(r.Thresholds[k].Expr)
		if err != nil {
			c.failf(field+".expr", "is not a threshold dbsock checks: %v", err)
			return
		}
		derived := Evaluate(r, []Threshold{th})
		stored := r.Thresholds[k:min(k+len(derived), len(r.Thresholds))]
		for j := range derived {
			if j < len(stored) {
				words := derived[j].ActualText // words, written again from the figures
				derived[j].ActualText = stored[j].ActualText
				c.agree(fmt.Sprintf("thresholds[%d]", k+j), stored[j], derived[j], "cases")
				stored[j].ActualText = words
			} else {
				c.failf("thresholds", "holds %d results, where the file's own cases give %d for %q", len(r.Thresholds), k+len(derived), th.Expr)
			}
		}
		k += len(derived)
	}
}
