package results

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// What ReadJSON accepts: a report that a run could have written, and no
// more of it than a report may cost to read and render. check is the one
// place a report read from a file is judged; each refusal names the field
// as the file does (summary[0].comparisons[1].speedup_p50, or in schema
// version 1 summary[0].unix_speedup_p50).

// Bounds on what a report file may hold. Each histogram decoded costs
// about 220 KiB and 0.1 to 0.3 ms (dbsock's geometry, HistogramGeometry),
// each block a point of the --plot picture: a report of dbsock run's
// defaults holds 18 runs and 180 blocks per case.
const (
	// MaxRuns is the most runs a report may hold.
	MaxRuns = 10_000
	// MaxPhases is the most timed phases a run may have (connect, dial,
	// tls, login, query, uncorrected), each with its histogram.
	MaxPhases = 8
	// MaxBlocks is the most blocks a report's runs may hold in all, and
	// the most noisy blocks its cases may list.
	MaxBlocks = 100_000
	// MaxSummaries is the most cases a report may hold.
	MaxSummaries = 5_000
)

// What one case of a run can be: the largest values the command line and
// the library accept (scenarios.MaxConcurrency, pipeline.MaxValueSize,
// pipeline.MaxPipeline, scenarios.MaxRate; a test holds them equal).
const (
	maxCaseConcurrency = 4096
	maxCaseValueSize   = 16 << 20
	maxCasePipeline    = 10_000
	maxCaseRate        = 10_000_000
)

// MaxLatencyNs is the largest latency a run can record: a latency above
// HighestNs is recorded as HighestNs, which its histogram reports as the
// top of that value's bucket.
var MaxLatencyNs = func() int64 {
	h := NewHistogram()
	_ = h.RecordValue(HighestNs)
	return h.Max()
}()

// maxSpeedup is the largest ratio of two latencies a run can record (and
// 1/maxSpeedup the smallest), with room for rounding.
var maxSpeedup = float64(MaxLatencyNs) / LowestNs * (1 + 1e-9)

// maxStartNs bounds when a block may start after the report began: a
// year, longer than any run (a case stops at --max-duration, at most a
// day).
const maxStartNs = 365 * 24 * 3600 * 1e9

// maxZ bounds a noisy block's z-score: a latency's distance from the
// median over the smallest scale RobustZ divides by.
const maxZ = 1e18

// checker finds the first field of a report that no run could have
// written.
type checker struct {
	err error
	v1  bool // the report was schema version 1: fields are named as it named them
}

func (c *checker) failf(field, format string, args ...any) {
	if c.err == nil {
		if c.v1 {
			field = v1Field(field)
		}
		c.err = fmt.Errorf("%s %s: not a report dbsock wrote", field, fmt.Sprintf(format, args...))
	}
}

var (
	v1Side       = regexp.MustCompile(`^(summary\[\d+\])\.sides\[(\d+)\]`)
	v1Comparison = regexp.MustCompile(`^(summary\[\d+\])\.comparisons\[(\d+)\]\.([a-z0-9_]+)`)
)

// v1Field names field of a case as schema version 1 held it: sides 0 and
// 1 were "tcp" and "unix", the Unix comparison's figures the case's own
// ("unix_speedup_p50", "p_value"), the further paths "paths[k]" with
// their side and comparison in one.
func v1Field(field string) string {
	if m := v1Side.FindStringSubmatch(field); m != nil {
		k, _ := strconv.Atoi(m[2])
		name := [2]string{"tcp", "unix"}
		if k < 2 {
			return m[1] + "." + name[k] + field[len(m[0]):]
		}
		return fmt.Sprintf("%s.paths[%d]%s", m[1], k-2, field[len(m[0]):])
	}
	if m := v1Comparison.FindStringSubmatch(field); m != nil {
		k, _ := strconv.Atoi(m[2])
		if k > 0 {
			return fmt.Sprintf("%s.paths[%d].%s", m[1], k-1, field[len(m[1])+len(".comparisons[]")+len(m[2])+1:])
		}
		name := m[3]
		if strings.HasPrefix(name, "speedup_") {
			name = "unix_" + name
		}
		return m[1] + "." + name + field[len(m[0]):]
	}
	return field
}

// count checks a count: not negative.
func (c *checker) count(field string, v int64) {
	if v < 0 {
		c.failf(field, "is %d, a negative count", v)
	}
}

// between checks that v is within lo and hi.
func (c *checker) between(field string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) {
		c.failf(field, "is %g, outside what a run can produce (%g to %g)", v, lo, hi)
	}
}

// latency checks l: every figure from 0 to MaxLatencyNs.
func (c *checker) latency(field string, l Latency) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"min", float64(l.Min)}, {"p50", float64(l.P50)}, {"p90", float64(l.P90)}, {"p99", float64(l.P99)},
		{"p999", float64(l.P999)}, {"max", float64(l.Max)}, {"mean", l.Mean}, {"stddev", l.StdDev}} {
		if !(f.v >= 0 && f.v <= float64(MaxLatencyNs)) {
			c.failf(field+"."+f.name, "is %g ns, outside what a run can record (0 to %d ns: a latency above %s is recorded as %s)",
				f.v, MaxLatencyNs, fmtSeconds(HighestNs), fmtSeconds(HighestNs))
		}
	}
}

func fmtSeconds(ns int64) string { return fmt.Sprintf("%d s", ns/1e9) }

// speedup checks a ratio of two latencies: 0 (no result) or within what
// two recorded latencies give.
func (c *checker) speedup(field string, v float64) {
	if v != 0 && !(v >= 1/maxSpeedup && v <= maxSpeedup) {
		c.failf(field, "is %g, outside what a ratio of two latencies can be (0 for none, else %.3g to %.3g)", v, 1/maxSpeedup, maxSpeedup)
	}
}

// interval checks ci: bounds the right way round around a speedup, a
// coverage, non-negative counts.
func (c *checker) interval(field string, ci *Interval) {
	if ci == nil {
		return
	}
	c.speedup(field+".center", ci.Center)
	c.speedup(field+".lo", ci.Lo)
	c.speedup(field+".hi", ci.Hi)
	if c.err == nil && (ci.Lo > ci.Hi || ci.Center < ci.Lo || ci.Center > ci.Hi) {
		c.failf(field, "%g to %g around %g is not an interval", ci.Lo, ci.Hi, ci.Center)
	}
	c.between(field+".confidence", ci.Confidence, 0, 1)
	c.count(field+".rounds", int64(ci.Rounds))
	c.count(field+".pairs", int64(ci.Pairs))
	c.count(field+".instances", int64(ci.Instances))
}

// caseOf checks a case's swept settings: what a run accepts.
func (c *checker) caseOf(field string, k Case) {
	c.between(field+".concurrency", float64(k.Concurrency), 0, maxCaseConcurrency)
	c.between(field+".value_size", float64(k.ValueSize), 0, maxCaseValueSize)
	c.between(field+".pipeline", float64(k.Pipeline), 0, maxCasePipeline)
	c.between(field+".rate", k.Rate, 0, maxCaseRate)
}

// check refuses what dbsock never writes: a report of nothing, more than
// a report may cost to read (MaxRuns, MaxBlocks, histograms of another
// geometry), a count, latency or speedup no run can produce, and a case
// whose comparisons name paths it did not measure.
func (r *Report) check(v1 bool) error {
	if len(r.Targets) == 0 && len(r.Runs) == 0 {
		return fmt.Errorf("the report holds no targets and no runs: nothing to show")
	}
	if err := r.checkSize(); err != nil {
		return err
	}
	c := &checker{v1: v1}
	c.config(&r.Config)
	for i := range r.Runs {
		c.run(fmt.Sprintf("runs[%d]", i), &r.Runs[i])
	}
	for i := range r.Summary {
		c.summary(fmt.Sprintf("summary[%d]", i), &r.Summary[i])
	}
	c.derived(r, v1)
	return c.err
}

// checkSize bounds how much a report holds before anything in it is
// looked at closely.
func (r *Report) checkSize() error {
	tooMany := func(what string, n, most int) error {
		return fmt.Errorf("the report holds %d %s; dbsock reads at most %d (see docs/output.md: what a report file may hold)", n, what, most)
	}
	if len(r.Runs) > MaxRuns {
		return tooMany("runs", len(r.Runs), MaxRuns)
	}
	if len(r.Summary) > MaxSummaries {
		return tooMany("cases (summary)", len(r.Summary), MaxSummaries)
	}
	blocks, noisy := 0, 0
	for i := range r.Runs {
		blocks += len(r.Runs[i].Blocks)
		if n := len(r.Runs[i].Phases); n > MaxPhases {
			return fmt.Errorf("runs[%d].phases holds %d phases; a run has at most %d", i, n, MaxPhases)
		}
	}
	for i := range r.Summary {
		noisy += len(r.Summary[i].NoisyBlocks)
	}
	if blocks > MaxBlocks {
		return tooMany("blocks in its runs", blocks, MaxBlocks)
	}
	if noisy > MaxBlocks {
		return tooMany("noisy blocks in its cases", noisy, MaxBlocks)
	}
	return nil
}

// run checks one run: its counts, latencies, blocks and histograms.
func (c *checker) run(field string, run *Run) {
	c.caseOf(field, run.Case)
	c.count(field+".n", run.N)
	c.count(field+".errors", run.Errors)
	if run.Errors > run.N {
		c.failf(field+".errors", "is %d, more than the run's %d ops", run.Errors, run.N)
	}
	c.latency(field+".latency_ns", run.Latency)
	c.between(field+".ops_per_sec", run.OpsPerSec, 0, math.MaxFloat64)
	c.count(field+".elapsed_ns", run.ElapsedNs)
	c.histogram(field+".histogram", run.Histogram)
	for name, ph := range run.Phases {
		c.latency(field+".phases."+name+".latency_ns", ph.Latency)
		c.histogram(field+".phases."+name+".histogram", ph.Histogram)
	}
	for j, b := range run.Blocks {
		bf := fmt.Sprintf("%s.blocks[%d]", field, j)
		c.between(bf+".start_ns", float64(b.StartNs), 0, maxStartNs)
		c.count(bf+".elapsed_ns", b.ElapsedNs)
		c.count(bf+".n", b.N)
		c.count(bf+".errors", b.Errors)
		c.count(bf+".server_cpu_ns", b.ServerCPUNs)
		c.latency(bf, Latency{P50: b.P50, Mean: b.Mean, P99: b.P99})
		for _, lag := range []struct {
			name string
			v    int64
		}{{"lag_p50_ns", b.LagP50Ns}, {"lag_p99_ns", b.LagP99Ns}, {"late_p99_ns", b.LateP99Ns}} {
			c.between(bf+"."+lag.name, float64(lag.v), 0, float64(MaxLatencyNs))
		}
	}
	c.cpu(field+".cpu", run.CPU)
}

// cpu checks CPU figures: none negative.
func (c *checker) cpu(field string, k *CPU) {
	if k == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"ops", ptr(float64(k.Ops))}, {"client_ns", ptr(float64(k.ClientNs))}, {"client_csw", ptr(float64(k.ClientCsw))},
		{"client_ns_per_op", &k.ClientNsPerOp}, {"client_csw_per_op", &k.ClientCswPerOp}, {"client_syscalls", ptr(float64(k.ClientSyscalls))},
		{"server_ns", intPtr(k.ServerNs)}, {"server_csw", intPtr(k.ServerCsw)}, {"server_syscalls", intPtr(k.ServerSyscalls)},
		{"server_ns_per_op", k.ServerNsPerOp}, {"server_csw_per_op", k.ServerCswPerOp},
		{"client_syscalls_per_op", k.ClientSyscallsPerOp}, {"server_syscalls_per_op", k.ServerSyscallsPerOp},
		{"client_wait_ns", intPtr(k.ClientWaitNs)}, {"server_wait_ns", intPtr(k.ServerWaitNs)},
		{"client_wait_ns_per_op", k.ClientWaitNsPerOp}, {"server_wait_ns_per_op", k.ServerWaitNsPerOp}} {
		if f.v != nil {
			c.between(field+"."+f.name, *f.v, 0, math.MaxFloat64)
		}
	}
}

// ptr is a pointer to v.
func ptr(v float64) *float64 { return &v }

// intPtr is *v as a float, nil for nil.
func intPtr(v *int64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(float64(*v))
}

// config checks what the run was asked for: counts not negative, a
// sweep's points each what dbsock run accepts, paths that are paths.
func (c *checker) config(k *Config) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"n", int64(k.N)}, {"warmup", int64(k.Warmup)}, {"rounds", int64(k.Rounds)}, {"instances", int64(k.Instances)},
		{"blocks", int64(k.Blocks)}, {"duration_ns", k.DurationNs}, {"max_duration_ns", k.MaxDurationNs}} {
		c.count("config."+f.name, f.v)
	}
	c.between("config.precision", k.Precision, 0, 1)
	c.between("config.rate", k.Rate, 0, maxCaseRate)
	points := func(name string, n int) {
		if n > MaxSummaries {
			c.failf("config."+name, "holds %d points, more than a report's cases can be (%d)", n, MaxSummaries)
		}
	}
	points("concurrency", len(k.Concurrency))
	points("value_sizes", len(k.ValueSizes))
	points("rates", len(k.Rates))
	points("pipelines", len(k.Pipelines))
	points("paths", len(k.Paths))
	for i, v := range k.Concurrency {
		c.between(fmt.Sprintf("config.concurrency[%d]", i), float64(v), 1, maxCaseConcurrency)
	}
	for i, v := range k.ValueSizes {
		c.between(fmt.Sprintf("config.value_sizes[%d]", i), float64(v), 0, maxCaseValueSize)
	}
	for i, v := range k.Rates {
		if !(v > 0 && v <= maxCaseRate) {
			c.failf(fmt.Sprintf("config.rates[%d]", i), "is %g, not a rate dbsock run accepts (above 0, up to %d ops/s)", v, maxCaseRate)
		}
	}
	for i, v := range k.Pipelines {
		c.between(fmt.Sprintf("config.pipelines[%d]", i), float64(v), 1, maxCasePipeline)
	}
	for i, p := range k.Paths {
		if !drivers.IsPath(p) {
			c.failf(fmt.Sprintf("config.paths[%d]", i), "is %q, not a path dbsock measures (%s)", p, drivers.PathNames())
		}
	}
	if k.Baseline != "" && !drivers.IsPath(k.Baseline) {
		c.failf("config.baseline", "is %q, not a path dbsock measures (%s)", k.Baseline, drivers.PathNames())
	}
	if o := k.SLO; o != nil {
		if !slices.Contains([]string{"p50", "p99", "p99.9"}, o.Percentile) {
			c.failf("config.slo.percentile", "is %q, not one dbsock measures (p50, p99 or p99.9)", o.Percentile)
		}
		c.between("config.slo.limit_ns", float64(o.LimitNs), float64(MinSLOLimit), float64(MaxSLOLimit))
	}
}

// histogram checks an encoded histogram's geometry (its header only).
func (c *checker) histogram(field, s string) {
	if s == "" || c.err != nil {
		return
	}
	if err := CheckHistogram(s); err != nil {
		c.failf(field, "is refused: %v", err)
	}
}

// summary checks one case: its sides (known paths, each once), its
// comparisons (each of a measured path against a measured baseline, one
// baseline for all) and their figures.
func (c *checker) summary(field string, s *Summary) {
	c.caseOf(field, s.Case)
	if len(s.Sides) == 0 {
		c.failf(field+".sides", "is empty, where a case has a side for each path it measured")
	}
	var paths []drivers.Transport
	for j, side := range s.Sides {
		sf := fmt.Sprintf("%s.sides[%d]", field, j)
		switch {
		case !drivers.IsPath(side.Path):
			c.failf(sf+".path", "is %q, not a path dbsock measures (%s)", side.Path, drivers.PathNames())
		case slices.Contains(paths, side.Path):
			c.failf(sf+".path", "is %q, a path the case already has a side for", side.Path)
		}
		paths = append(paths, side.Path)
		c.side(sf, side.Side)
	}
	var compared []drivers.Transport
	for j := range s.Comparisons {
		cmp := &s.Comparisons[j]
		cf := fmt.Sprintf("%s.comparisons[%d]", field, j)
		switch {
		case !slices.Contains(paths, cmp.Path):
			c.failf(cf+".path", "is %q, a path the case has no side for (its sides: %s)", cmp.Path, pathList(paths))
		case !slices.Contains(paths, cmp.Baseline):
			c.failf(cf+".baseline", "is %q, a path the case has no side for (its sides: %s)", cmp.Baseline, pathList(paths))
		case cmp.Path == cmp.Baseline:
			c.failf(cf+".path", "is %q, its own baseline", cmp.Path)
		case slices.Contains(compared, cmp.Path):
			c.failf(cf+".path", "is %q, a path the case already compares", cmp.Path)
		case cmp.Baseline != s.Comparisons[0].Baseline:
			c.failf(cf+".baseline", "is %q, where the case's first comparison's is %q: a case has one baseline", cmp.Baseline, s.Comparisons[0].Baseline)
		}
		compared = append(compared, cmp.Path)
		c.comparison(cf, cmp)
	}
	for j, nb := range s.NoisyBlocks {
		nf := fmt.Sprintf("%s.noisy_blocks[%d]", field, j)
		c.between(nf+".start_ns", float64(nb.StartNs), 0, maxStartNs)
		c.latency(nf, Latency{P50: nb.P50})
		c.between(nf+".z", nb.Z, -maxZ, maxZ)
	}
}

func pathList(paths []drivers.Transport) string {
	if len(paths) == 0 {
		return "none"
	}
	var s string
	for i, p := range paths {
		if i > 0 {
			s += ", "
		}
		s += string(p)
	}
	return s
}

// side checks one path's pooled result.
func (c *checker) side(field string, s Side) {
	c.count(field+".n", s.N)
	c.count(field+".errors", s.Errors)
	c.between(field+".error_rate", s.ErrorRate, 0, 1)
	c.latency(field+".latency_ns", s.Latency)
	c.between(field+".ops_per_sec", s.OpsPerSec, 0, math.MaxFloat64)
	c.cpu(field+".cpu", s.CPU)
	for name, l := range s.Phases {
		c.latency(field+".phases."+name, l)
	}
}

// comparison checks one path against the baseline: speedups, intervals,
// p-values.
func (c *checker) comparison(field string, cmp *Comparison) {
	c.speedup(field+".speedup_p50", cmp.SpeedupP50)
	c.speedup(field+".speedup_mean", cmp.SpeedupMean)
	c.speedup(field+".speedup_p50_pooled", cmp.SpeedupP50Pooled)
	c.speedup(field+".unix_gain_p50", cmp.UnixGainP50)
	for k, v := range cmp.InstanceSpeedups {
		c.speedup(fmt.Sprintf("%s.instance_speedups[%d]", field, k), v)
	}
	if len(cmp.InstanceSpeedups) > MaxRuns {
		c.failf(field+".instance_speedups", "holds %d, more than a report's runs can be (%d)", len(cmp.InstanceSpeedups), MaxRuns)
	}
	c.interval(field+".speedup_p50_ci", cmp.SpeedupP50CI)
	c.interval(field+".speedup_mean_ci", cmp.SpeedupMeanCI)
	c.interval(field+".unix_gain_p50_ci", cmp.UnixGainP50CI)
	c.between(field+".p_value", cmp.PValue, 0, 1)
	c.between(field+".p_value_holm", cmp.PValueHolm, 0, 1)
	if t := cmp.Tail; t != nil { // p99 over p99: a ratio of latencies
		c.speedup(field+".tail.ratio", t.Ratio)
		c.interval(field+".tail.ci", t.CI)
		c.count(field+".tail.pairs", int64(t.Pairs))
	}
	if k := cmp.Capacity; k != nil { // CPU per op over CPU per op
		c.between(field+".capacity.ratio", k.Ratio, 0, maxCPURatio)
		if ci := k.CI; ci != nil {
			for _, v := range []struct {
				name string
				v    float64
			}{{"center", ci.Center}, {"lo", ci.Lo}, {"hi", ci.Hi}} {
				c.between(field+".capacity.ci."+v.name, v.v, 1/maxCPURatio, maxCPURatio)
			}
		}
		c.count(field+".capacity.pairs", int64(k.Pairs))
	}
}

// maxCPURatio bounds a ratio of two server CPU times per op: a block's
// CPU from 1 ns over a billion ops to a day on 4096 CPUs for one op.
const maxCPURatio = 1e27
