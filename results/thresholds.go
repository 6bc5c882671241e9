// Thresholds: CI checks such as "redis.unix.p99<2ms",
// "mysql.unix_speedup_p50>=1.0" or "redis.tls.speedup_p50.lo>=1" evaluated against a report's summary, as k6
// thresholds do: a run that violates one fails.

package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Threshold is one parsed expression: Target.Side.Metric Op Value, or
// Target.Metric Op Value for the speedups.
type Threshold struct {
	Expr   string
	Target string
	// Stack, when set (TARGET@STACK), is the client stack whose case the
	// threshold checks: go, c, python, python:psycopg, ... ("": every
	// stack's).
	Stack string
	// Side is the path of a latency metric ("tcp", "unix", or a further
	// path such as "tcp6"), or of a path's speedup over the baseline
	// (Metric "speedup_p50" or "speedup_mean"); "" for Unix's speedups
	// by their own names (unix_speedup_p50, unix_speedup_mean).
	Side   string
	Metric string
	// Bound, for a speedup, is "lo" or "hi": the 95% interval's bound
	// instead of the estimate.
	Bound string
	Op    string
	Value float64 // nanoseconds for latency metrics
}

var (
	latencyMetrics = []string{"min", "p50", "p90", "p99", "p999", "max", "mean", "stddev"}
	sideMetrics    = append(append([]string{}, latencyMetrics...), "ops_per_sec", "errors", "error_rate")
	targetMetrics  = []string{"unix_speedup_p50", "unix_speedup_mean"}
	ops            = []string{"<=", ">=", "==", "<", ">"}
)

// Syntax describes the accepted form, for error messages and help.
const Syntax = "TARGET.PATH.METRIC OP VALUE (PATH: tcp, unix, tcp6 or tls; " +
	"METRIC: min p50 p90 p99 p999 max mean stddev ops_per_sec errors error_rate; " +
	"latencies take units like 2ms or 500us) or TARGET.PATH.speedup_p50|speedup_mean[.lo|.hi] OP NUMBER " +
	"(the baseline's p50 or mean over the path's, paired; .lo and .hi: the 95% interval's bounds; " +
	"unix_speedup_p50, unix_speedup_mean and PATH_speedup_p50 are other names for them); OP: < <= > >= ==; " +
	"TARGET@STACK (such as redis@python) checks that client stack's case alone; " +
	"TARGET@STACK.PATH.stack_ratio[.lo|.hi] OP NUMBER: that stack's speedup of the path over the reference stack's (Go's), paired by server instance"

// speedupMetrics are the metrics of a path's comparison with the baseline.
var speedupMetrics = []string{pathSpeedup, "speedup_mean"}

// pathSpeedup is the metric of a further path's p50 speedup over TCP.
const pathSpeedup = "speedup_p50"

// isPath says whether s names a path dbsock measures.
func isPath(s string) bool { return drivers.IsPath(drivers.Transport(s)) }

// furtherSpeedup splits "tcp6_speedup_p50" into its path, for a further
// path (not unix, whose speedups have their own names).
func furtherSpeedup(s string) (string, bool) {
	path, ok := strings.CutSuffix(s, "_"+pathSpeedup)
	return path, ok && isPath(path) && path != "unix" && path != "tcp"
}

// Parse reads one threshold expression.
func Parse(expr string) (Threshold, error) {
	t := Threshold{Expr: expr}
	s := strings.ReplaceAll(expr, " ", "")
	var lhs, rhs string
	for _, op := range ops {
		if i := strings.Index(s, op); i > 0 {
			t.Op, lhs, rhs = op, s[:i], s[i+len(op):]
			break
		}
	}
	if t.Op == "" {
		return t, fmt.Errorf("threshold %q has no comparison; want %s", expr, Syntax)
	}
	parts := strings.Split(lhs, ".")
	switch {
	case parts[0] == "":
		return t, fmt.Errorf("threshold %q names no target; want %s", expr, Syntax)
	case (len(parts) == 3 || len(parts) == 4 && (parts[3] == "lo" || parts[3] == "hi")) && isPath(parts[1]) && contains(speedupMetrics, parts[2]):
		t.Target, t.Side, t.Metric = parts[0], parts[1], parts[2]
		if len(parts) == 4 {
			t.Bound = parts[3]
		}
	case (len(parts) == 3 || len(parts) == 4 && (parts[3] == "lo" || parts[3] == "hi")) && isPath(parts[1]) && parts[2] == StackRatio:
		t.Target, t.Side, t.Metric = parts[0], parts[1], parts[2]
		if len(parts) == 4 {
			t.Bound = parts[3]
		}
	case len(parts) == 3 && isPath(parts[1]) && contains(sideMetrics, parts[2]):
		t.Target, t.Side, t.Metric = parts[0], parts[1], parts[2]
	case len(parts) == 2 && contains(targetMetrics, parts[1]):
		t.Target, t.Metric = parts[0], parts[1]
	case len(parts) == 3 && contains(targetMetrics, parts[1]) && (parts[2] == "lo" || parts[2] == "hi"):
		t.Target, t.Metric, t.Bound = parts[0], parts[1], parts[2]
	case (len(parts) == 2 || len(parts) == 3 && (parts[2] == "lo" || parts[2] == "hi")) && isFurther(parts[1]):
		path, _ := furtherSpeedup(parts[1])
		t.Target, t.Side, t.Metric = parts[0], path, pathSpeedup
		if len(parts) == 3 {
			t.Bound = parts[2]
		}
	default:
		return t, fmt.Errorf("threshold %q: %q is not a metric; want %s", expr, lhs, Syntax)
	}
	if target, stack, ok := strings.Cut(t.Target, "@"); ok {
		if target == "" || stack == "" {
			return t, fmt.Errorf("threshold %q: %q names no target and client stack, such as redis@python", expr, t.Target)
		}
		t.Target, t.Stack = target, stack
	}
	if contains(latencyMetrics, t.Metric) {
		d, err := time.ParseDuration(rhs)
		if err != nil || d < 0 {
			return t, fmt.Errorf("threshold %q: %q is not a duration such as 2ms or 500us", expr, rhs)
		}
		t.Value = float64(d)
		return t, nil
	}
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return t, fmt.Errorf("threshold %q: %q is not a number", expr, rhs)
	}
	t.Value = v
	return t, nil
}

// Evaluate checks every threshold against r's summaries (every scenario of
// the target) and returns one result per threshold and summary.
func Evaluate(r *Report, ths []Threshold) []ThresholdResult {
	var out []ThresholdResult
	for _, th := range ths {
		if th.Metric == StackRatio {
			out = append(out, evaluateStacks(r, th)...)
			continue
		}
		found := false
		for _, s := range r.Summary {
			if s.Target != th.Target || !th.ofStack(s.Stack) {
				continue
			}
			found = true
			actual := th.actual(s)
			res := ThresholdResult{Expr: th.Expr, Scenario: s.Scenario, Stack: s.Stack, OK: th.holds(actual), ActualText: th.format(actual)}
			if !math.IsNaN(actual) && !math.IsInf(actual, 0) {
				res.Actual = &actual
			}
			if why := r.Incomplete(th.Target); why != "" {
				// A figure from a run that did not finish passes nothing.
				res.OK, res.ActualText = false, res.ActualText+"; not judged: the run did not finish ("+why+")"
			}
			out = append(out, res)
		}
		if !found {
			what := "target " + th.Target
			if th.Stack != "" {
				what += " from client stack " + th.Stack
			}
			out = append(out, ThresholdResult{Expr: th.Expr, OK: false, ActualText: "no result for " + what})
		}
	}
	return out
}

// ofStack says whether the threshold checks the case of client stack
// stack ("" for Go's drivers in dbsock, which TARGET@go names).
func (th Threshold) ofStack(stack string) bool {
	return th.Stack == "" || th.Stack == stack || th.Stack == "go" && stack == ""
}

// Incomplete says why target's measurement did not finish ("" when it
// did): the target failed, or one of its runs stopped early.
func (r *Report) Incomplete(target string) string {
	for _, t := range r.Targets {
		if t.Name == target && t.Error != "" {
			return t.Error
		}
	}
	for _, run := range r.Runs {
		if run.Target == target && run.Incomplete {
			return fmt.Sprintf("round %d over %s stopped early: %s", run.Round, run.Transport, run.Error)
		}
	}
	return ""
}

// comparison says which path's comparison with the baseline th reads,
// and whether of the p50 or the mean; ok is false for a side's metric.
func (th Threshold) comparison() (path drivers.Transport, mean, ok bool) {
	switch th.Metric {
	case "unix_speedup_p50":
		return Socket(), false, true
	case "unix_speedup_mean":
		return Socket(), true, true
	case pathSpeedup, "speedup_mean":
		return drivers.Transport(th.Side), th.Metric == "speedup_mean", true
	}
	return "", false, false
}

// Compared is the path whose comparison with the baseline th reads; ok is
// false for a side's metric (a latency, a count).
func (th Threshold) Compared() (path drivers.Transport, ok bool) {
	path, _, ok = th.comparison()
	return path, ok
}

func (th Threshold) actual(s Summary) float64 {
	if path, mean, ok := th.comparison(); ok {
		c := s.ComparisonOf(path)
		switch {
		case c == nil:
			return math.NaN() // the path is the baseline, or was not measured: nothing holds
		case mean:
			return bound(c.SpeedupMean, c.SpeedupMeanCI, th.Bound)
		}
		return bound(c.SpeedupP50, c.SpeedupP50CI, th.Bound)
	}
	side, ok := s.SideOf(drivers.Transport(th.Side))
	if !ok {
		return math.NaN() // the case has no such path: nothing holds
	}
	l := side.Latency
	switch th.Metric {
	case "min":
		return float64(l.Min)
	case "p50":
		return float64(l.P50)
	case "p90":
		return float64(l.P90)
	case "p99":
		return float64(l.P99)
	case "p999":
		return float64(l.P999)
	case "max":
		return float64(l.Max)
	case "mean":
		return l.Mean
	case "stddev":
		return l.StdDev
	case "ops_per_sec":
		return side.OpsPerSec
	case "errors":
		return float64(side.Errors)
	case "error_rate":
		if side.N == 0 {
			return 0
		}
		return float64(side.Errors) / float64(side.N)
	}
	return 0
}

// bound picks the estimate, or an interval bound; NaN (never holds) when
// the bound was asked for and there is no interval.
func bound(estimate float64, ci *Interval, which string) float64 {
	switch {
	case which == "":
		return estimate
	case ci == nil:
		return math.NaN()
	case which == "lo":
		return ci.Lo
	}
	return ci.Hi
}

func (th Threshold) holds(v float64) bool {
	switch th.Op {
	case "<":
		return v < th.Value
	case "<=":
		return v <= th.Value
	case ">":
		return v > th.Value
	case ">=":
		return v >= th.Value
	case "==":
		return v == th.Value
	}
	return false
}

func (th Threshold) format(v float64) string {
	name := th.Metric
	if path, _, ok := th.comparison(); ok {
		if th.Side != "" {
			name = th.Side + "_" + name
		}
		if math.IsNaN(v) && th.Bound == "" {
			return name + ": no comparison of " + string(path) + " with the baseline in this case (it is the baseline, or was not measured)"
		}
	} else if math.IsNaN(v) {
		return name + ": no " + th.Side + " path measured in this case"
	}
	if th.Bound != "" {
		name += "." + th.Bound
		if math.IsNaN(v) {
			return name + ": no interval (too few block pairs)"
		}
	}
	if contains(latencyMetrics, th.Metric) {
		return name + " " + time.Duration(v).String()
	}
	return name + " " + strconv.FormatFloat(v, 'g', 4, 64)
}

// isFurther says whether s is a further path's speedup metric.
func isFurther(s string) bool { _, ok := furtherSpeedup(s); return ok }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
