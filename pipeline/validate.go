package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// Limits of a plan's settings, beyond a case's (scenarios.Settings.Validate
// and ValidateCase); the words of their errors are built from them.
const (
	MaxInstances = 100
	MaxPipeline  = 10_000
	MaxValueSize = 16 << 20 // the largest document or packet a server takes by default
	// ErrorRateLimit is the largest Gates.MaxErrorRate, a share (1: 100%).
	ErrorRateLimit = 1.0
)

// ownValueSize is the size of the targets' own small value, as a case
// without a value size counts it against the memory it may hold.
const ownValueSize = 6

// Validate checks, before anything starts, that the plan can run: every
// case's settings (scenarios.Settings.Validate, ValidateCase), the sweep, the instances,
// what each target can do (pipelining, value sizes, the user's own op),
// the thresholds, the write rules and what the largest case would hold in
// memory. Its errors are *setting.Error values naming the plan's fields;
// Run calls it first.
func (p Plan) Validate() error {
	for _, check := range []func() error{p.validatePaths, p.validateNetns, p.validateSweep, p.validateCases, p.validateInstances, p.validateTargets,
		p.validateQueries, p.validateWrites, p.validateThresholds, p.validateMemory, p.validateClients, p.validateMeasurable, p.validatePlacements} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateSweep checks each value of the sweep's lists.
func (p Plan) validateSweep() error {
	for _, c := range p.Sweep.Concurrency {
		if c < 1 || c > scenarios.MaxConcurrency {
			return setting.Err("%s %d is out of range; accepted: 1 to %d", setting.Concurrency, c, scenarios.MaxConcurrency)
		}
	}
	for _, d := range p.Sweep.Pipelines {
		if err := validDepth(d); err != nil {
			return err
		}
	}
	for _, s := range p.Sweep.ValueSizes {
		if err := validValueSize(s); err != nil {
			return err
		}
	}
	if math.IsNaN(p.Gates.MaxErrorRate) || p.Gates.MaxErrorRate > ErrorRateLimit {
		return setting.Err("%s %g is not a share up to %g (%g%%), such as 0.01", setting.MaxErrors, p.Gates.MaxErrorRate, ErrorRateLimit, ErrorRateLimit*100)
	}
	if p.Explain && (len(p.Sweep.ValueSizes) > 0 || slices.ContainsFunc(p.Sweep.Pipelines, func(d int) bool { return d > 1 })) {
		return setting.Err("%s splits one lookup of each target's own value into its layers; it does not combine with %s or %s (leave those out, or %s)",
			setting.Explain, setting.Pipelines, setting.ValueSizes, setting.Explain)
	}
	return nil
}

// validDepth checks one pipeline depth (Pipelines).
func validDepth(d int) error {
	if d < 1 || d > MaxPipeline {
		return setting.Err("%s %d is out of range; accepted: 1 to %d", setting.Pipelines, d, MaxPipeline)
	}
	return nil
}

// validValueSize checks one value size (ValueSizes).
func validValueSize(s int) error {
	if s < 1 || s > MaxValueSize {
		return setting.Err("%s %s is out of range; accepted: %s to %s", setting.ValueSizes, setting.Bytes(int64(s)), setting.Bytes(1), setting.Bytes(MaxValueSize))
	}
	return nil
}

// validateInstances checks Instances against Precision: Precision
// measures one instance until its interval is narrow enough. (A server
// the user runs is not restarted: its instances are fresh connections.)
func (p Plan) validateInstances() error {
	if p.Instances < 0 || p.Instances > MaxInstances {
		return setting.Err("%s %d is out of range; accepted: 1 to %d", setting.Instances, p.Instances, MaxInstances)
	}
	switch {
	case p.Loop.Precision > 0 && p.InstancesAsked && p.Instances > 1:
		return setting.Err("%s adds rounds to one server instance until its interval is narrow enough, and %s %d computes the interval over instances: give one of them",
			setting.Precision, setting.Instances, p.Instances)
	}
	return nil
}

// holmWarning says, before anything starts, when the run makes more
// comparisons (each measured case's paths against the baseline) than a
// sign test over the server instances asked for can carry through Holm's
// adjustment: no verdict could then name a winner, whatever the servers
// do. It names the setting to raise (setting.Instances), for the log to
// word (Output.Name). (Instances not asked for are raised to what the
// comparisons need: InstancesPerCase.)
func (p Plan) holmWarning() setting.Message {
	m := p.comparisons()
	need := results.InstancesForHolm(m)
	if p.Instances < results.MinInstances || p.Instances >= need {
		return setting.Message{}
	}
	placements := ""
	if n := len(p.turns()); n > 1 {
		placements = fmt.Sprintf(" × %d placements", n)
	}
	return setting.Msg("%d comparisons (%d targets and client stacks measured × %d cases%s × %d paths against %s) over %d server instances: Holm's adjustment will let none of them name a winner; set %s to %d or more for verdicts",
		m, p.measured(), p.Cases(), placements, len(p.paths())-1, p.baseline().Label(), p.Instances, setting.Instances, need)
}

// InstancesWarning says, before anything starts, when each case runs on
// more than one server instance but fewer than an interval over instances
// needs (results.MinInstances): the run would end with medians and no
// interval or verdict. It names the setting to raise
// (setting.Instances). A run is not refused for it: a few instances make
// a quick check of the set-up and the restarts.
func (p Plan) InstancesWarning() setting.Message {
	n := p.InstancesPerCase()
	if n <= 1 || n >= results.MinInstances {
		return setting.Message{}
	}
	return setting.Msg("%s %d: an interval over server instances needs %d or more, so this run's speedups will have no 95%% interval and no verdict, only medians "+
		"(and a threshold on .lo or .hi cannot hold); give %s %d or more for verdicts, or %s 1 for an interval over one instance's block pairs",
		setting.Instances, n, results.MinInstances, setting.Instances, results.MinInstances, setting.Instances)
}

// comparisons is how many comparisons the run makes, over which Holm's
// adjustment runs: every path of every measured (target, client stack)'s
// every case, under every placement, against the baseline.
func (p Plan) comparisons() int {
	return p.measured() * p.Cases() * len(p.turns()) * (len(p.paths()) - 1)
}

// measured is how many (target, client stack) pairs the run measures: a
// stack skipped for a target measures nothing.
func (p Plan) measured() int {
	n := 0
	for _, t := range p.Targets {
		for _, c := range p.clients() {
			if p.skipReason(t, c) == "" {
				n++
			}
		}
	}
	return n
}

// InstancesPerCase is how many server instances each case measures:
// Instances as asked for; not asked for, Instances or, when the run makes
// more comparisons than a sign test over them can carry through Holm's
// adjustment (results.InstancesForHolm), as many as it needs; 1 under
// Precision unless Instances was asked for.
func (p Plan) InstancesPerCase() int {
	switch {
	case p.Loop.Precision > 0 && !p.InstancesAsked:
		return 1
	case !p.InstancesAsked && p.Instances >= results.MinInstances:
		return min(max(p.Instances, results.InstancesForHolm(p.comparisons())), MaxInstances)
	}
	return max(p.Instances, 1)
}

// TotalOps is how many timed ops the plan does when every case runs its
// N ops (shared by its workers) on every path it asks for (fewer where a
// server lacks a path; unknown, and so not this, under Loop.Duration),
// for a progress bar.
func (p Plan) TotalOps() int64 {
	workers := len(p.Sweep.Concurrency)
	cases := int64(p.measured()) * int64(max(len(p.Sweep.Scenarios), 1)) * int64(max(len(p.Sweep.ValueSizes), 1)) * int64(max(len(p.Sweep.Pipelines), 1))
	rounds := int64(max(p.Loop.Rounds, 1)) * int64(p.InstancesPerCase())
	return cases * int64(max(workers, 1)) * int64(len(p.turns())) * rounds * int64(len(p.PathsAsked())) * int64(p.Loop.N)
}

// pipeliners lists the registered targets whose driver can send a batch
// of lookups in one round trip (drivers.Pipeliner), as "a, b and c".
func pipeliners() string {
	var names []string
	for _, t := range targets.List() {
		if _, ok := t.Settings().Driver(drivers.Workload{}).(drivers.Pipeliner); ok {
			names = append(names, t.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// validateTargets checks that every target can do what the sweep asks of
// it: batches of lookups (Pipelines) and values of other sizes.
func (p Plan) validateTargets() error {
	deep := slices.ContainsFunc(p.Sweep.Pipelines, func(d int) bool { return d > 1 })
	for _, t := range p.Targets {
		s := p.settings(t)
		if _, ok := s.Driver(drivers.Workload{}).(drivers.Pipeliner); deep && !ok {
			return setting.Err("%s applies to %s (a batch of lookups in one round trip); target %s has no pipelining", setting.Pipelines, pipeliners(), t.Name)
		}
		for _, size := range p.Sweep.ValueSizes {
			if d := s.Driver(drivers.Workload{ValueSize: size}); d.ValueSize() != size {
				return setting.Err("%s does not apply to target %s: its reply is fixed (%d B); leave %s out of a value-size sweep", setting.ValueSizes, t.Name, d.ValueSize(), t.Name)
			}
		}
	}
	return nil
}

// validateQueries asks each target's driver whether it takes the user's
// own op given for it, and refuses what cannot go together.
func (p Plan) validateQueries() error {
	for name := range p.Workload.Queries {
		if !p.measures(name) {
			return setting.Err("%s names target %s, which this run does not measure (it runs %s)", setting.Queries, name, p.names())
		}
	}
	for name := range p.Workload.KeysFrom {
		if !p.measures(name) {
			return setting.Err("%s names target %s, which this run does not measure (it runs %s)", setting.KeysFrom, name, p.names())
		}
	}
	for _, t := range p.Targets {
		if err := p.validateQuery(t.Name); err != nil {
			return err
		}
	}
	return nil
}

func (p Plan) validateQuery(name string) error {
	s := p.Settings[name]
	if s == nil {
		return nil
	}
	q, hasQuery := p.Workload.Queries[name]
	if qo, ok := s.(targets.QueryOnly); ok && !hasQuery {
		if fields := qo.NeedQuery(); len(fields) > 0 {
			args := []any{}
			for _, f := range fields {
				args = append(args, f)
			}
			format := strings.Repeat("%s, ", len(fields)-1) + "%s applies to your own op; give %s for %s too"
			return setting.Err(format, append(args, setting.Queries, name)...)
		}
	}
	if _, keyed := p.Workload.KeysFrom[name]; keyed && !hasQuery {
		if p.Loop.Op != drivers.OpRead && p.Loop.Op != "" {
			return setting.Err("%s %s: dbsock writes only to its own table, which it does not create for your keys; name your write with %s (and %s)",
				setting.KeysFrom, name, setting.Queries, setting.AllowWrites)
		}
		return setting.Err("%s for %s gives your keys to your own op: give %s too (dbsock's own lookup reads only the rows it seeds, and with your keys it seeds none)",
			setting.KeysFrom, name, setting.Queries)
	}
	if !hasQuery {
		return nil
	}
	if p.Loop.Op == drivers.OpMixed {
		return setting.Err("%s %s times dbsock's own read and update; with %s for %s, use %s %s or %s",
			setting.Op, drivers.OpMixed, setting.Queries, name, setting.Op, drivers.OpRead, drivers.OpUpdate)
	}
	qt, ok := s.Driver(drivers.Workload{}).(drivers.QueryTaker)
	if !ok {
		return setting.Err("%s does not apply to target %s: its op is fixed", setting.Queries, name)
	}
	op := p.Loop.Op
	if op == "" {
		op = drivers.OpRead
	}
	if err := qt.CheckQuery(q, op); err != nil {
		return setting.Err("%s for %s: %w", setting.Queries, name, err)
	}
	return nil
}

// validateWrites refuses writes in batches, and writes to servers the user
// runs (their endpoints given) unless AllowWrites says so.
func (p Plan) validateWrites() error {
	op := p.Loop.Op
	if op == "" || op == drivers.OpRead {
		return nil
	}
	if slices.ContainsFunc(p.Sweep.Pipelines, func(d int) bool { return d > 1 }) {
		return setting.Err("%s %s times one op per round trip; leave out %s", setting.Op, op, setting.Pipelines)
	}
	if p.Workload.AllowWrites {
		return nil
	}
	switch p.ProviderName {
	case "local", "docker", "compose":
		return nil // dbsock starts every server
	}
	for _, t := range p.Targets {
		s := p.Settings[t.Name]
		if s == nil {
			continue
		}
		if pair, err := s.External(); err == nil && pair.Given() {
			what := "dbsock's own table, keys or collection only"
			if _, ok := p.Workload.Queries[t.Name]; ok {
				what = "your own op"
			}
			return setting.Err("%s %s would write to the %s server you run (%s); add %s to let it", setting.Op, op, t.Name, what, setting.AllowWrites)
		}
	}
	return nil
}

// validateThresholds checks that each threshold names a target of the run.
func (p Plan) validateThresholds() error {
	for _, th := range p.Gates.Thresholds {
		if !p.measures(th.Target) {
			return setting.Err("%s %q names target %s, which this run does not measure (it runs %s)", setting.Thresholds, th.Expr, th.Target, p.names())
		}
		if th.Stack != "" && !slices.Contains(p.stackNames(), th.Stack) {
			return setting.Err("%s %q names client stack %s, which this run does not measure%s: its stacks are %s (a cmd: agent is cmd, a second one cmd2)",
				setting.Thresholds, th.Expr, th.Stack, DidYouMean(th.Stack, p.stackNames()), strings.Join(p.stackNames(), ", "))
		}
		if th.Side != "" && !slices.Contains(p.paths(), drivers.Transport(th.Side)) {
			return setting.Err("%s %q names path %s, which this run does not measure (its %s are %s)", setting.Thresholds, th.Expr, th.Side, setting.Paths, joinPaths(p.paths()))
		}
		if path, ok := th.Compared(); ok && path == p.baseline() {
			return setting.Err("%s %q asks for %s's speedup over the baseline, which is %s itself; name another path, or another %s", setting.Thresholds, th.Expr, path, path, setting.Baseline)
		}
	}
	return nil
}

// validateMemory estimates what the sweep's largest case holds at once
// and refuses what cannot fit: the values in flight in dbsock
// (scenarios.Settings.CheckMemory), and the values seeded into each server
// (rows x value size) against half of what this machine has available.
func (p Plan) validateMemory() error {
	size := int64(ownValueSize)
	if len(p.Sweep.ValueSizes) > 0 {
		size = max(int64(slices.Max(p.Sweep.ValueSizes)), 1)
	}
	depth := max(slices.Max(append([]int{1}, p.Sweep.Pipelines...)), 1)
	for _, c := range p.cases() {
		var me *scenarios.MemoryError
		if err := p.Loop.For(c).CheckMemory(c, size, depth, len(p.paths())); errors.As(err, &me) {
			format := "%s %d would hold about %s in dbsock (%s per worker in latency histograms and connections, one per path, and %s of values in flight at %s %d and %s %s), more than the %s it allows itself; "
			args := []any{setting.Concurrency, me.Workers, setting.Bytes(me.Bytes), setting.Bytes(me.WorkerBytes), setting.Bytes(me.ValueBytes),
				setting.Pipelines, depth, setting.ValueSizes, setting.Bytes(size), setting.Bytes(scenarios.ClientBudget)}
			if me.MaxWorkers == 0 {
				return setting.Err(format+"even one worker does not fit: lower %s or %s", append(args, setting.Pipelines, setting.ValueSizes)...)
			}
			return setting.Err(format+"lower %s to at most %d, or %s or %s", append(args, setting.Concurrency, me.MaxWorkers, setting.Pipelines, setting.ValueSizes)...)
		}
	}
	seeds := false
	for _, t := range p.Targets {
		if !t.Own && p.Workload.KeysFrom[t.Name].Query == "" && p.Workload.KeysFrom[t.Name].File == "" {
			seeds = true
		}
	}
	avail, err := sysinfo.AvailableMemory()
	if !seeds || err != nil {
		return nil
	}
	if seeded := int64(p.Workload.Rows) * size; seeded > avail/2 {
		return setting.Err("%s %d x %s %s seeds about %s into each server, more than half of the %s this machine has available; lower %s (at most %d at this size) or %s",
			setting.Rows, p.Workload.Rows, setting.ValueSizes, setting.Bytes(size), setting.Bytes(seeded), setting.Bytes(avail), setting.Rows, twoFigures(avail/2/size), setting.ValueSizes)
	}
	return nil
}

// twoFigures is n rounded down to two significant figures: a bound
// read from the machine's available memory, which moves by the moment,
// said the same from one moment to the next.
func twoFigures(n int64) int64 {
	unit := int64(1)
	for n/unit >= 100 {
		unit *= 10
	}
	return n / unit * unit
}

// measures says whether the plan measures the target name.
func (p Plan) measures(name string) bool {
	return slices.ContainsFunc(p.Targets, func(t *targets.Target) bool { return t.Name == name })
}

// names lists the plan's targets, for errors.
func (p Plan) names() string {
	var ns []string
	for _, t := range p.Targets {
		ns = append(ns, t.Name)
	}
	return strings.Join(ns, ", ")
}

// pathsOf is the endpoints of srv on the plan's paths; a path the server
// does not have is left out, and ti's warnings say why.
func (p Plan) pathsOf(srv *supply.Server, ti *results.Target) drivers.Paths {
	var paths drivers.Paths
	for _, t := range p.paths() {
		ep, err := srv.Path(t)
		if err != nil {
			w := results.Warn(results.PathNotMeasured, "The %s path was not measured: %v.", t, err)
			ti.Warnings = append(ti.Warnings, w)
			fmt.Fprintf(p.log(), "dbsock: %s: %s\n", ti.Name, w.In(p.Output.Name))
			continue
		}
		paths = append(paths, ep)
		listed := slices.ContainsFunc(ti.Endpoints, func(e drivers.Endpoint) bool { return e.Transport == t })
		if t != drivers.TCP && t != drivers.Unix && !listed {
			ti.Endpoints = append(ti.Endpoints, ep) // describeServer gave the two (a hop's first legs, where it has no tcp or unix path)
		}
	}
	return paths
}

// baseline is the path the others are compared with.
func (p Plan) baseline() drivers.Transport {
	if p.Baseline == "" {
		return drivers.TCP
	}
	return p.Baseline
}

// paths is Paths, or tcp and unix.
func (p Plan) paths() []drivers.Transport { return p.PathsAsked() }

// PathsAsked are the paths every case measures where its server offers
// them: Paths, or TCP and the Unix socket when it is empty.
func (p Plan) PathsAsked() []drivers.Transport {
	if len(p.Paths) == 0 {
		return []drivers.Transport{drivers.TCP, drivers.Unix}
	}
	return p.Paths
}

// validatePaths checks the paths: known ones, each once, TCP (the
// reference) and Unix among them, the baseline among them, the IPv6
// loopback on this host when tcp6 is asked for, and each served by the
// provider (ValidateProvider). It gives every reason at once, in one
// error.
func (p Plan) validatePaths() error {
	var why []error
	seen := map[drivers.Transport]bool{}
	for _, t := range p.paths() {
		switch {
		case !drivers.IsPath(t):
			why = append(why, setting.Err("%s: %q is not a path; use %s%s", setting.Paths, t, drivers.PathNames(), DidYouMean(string(t), pathStrings(drivers.AllPaths))))
		case seen[t]:
			why = append(why, setting.Err("%s names %s twice", setting.Paths, t))
		}
		seen[t] = true
	}
	if !seen[drivers.TCP] || !seen[drivers.Unix] {
		why = append(why, setting.Err("%s %s: every run measures tcp (the path each other one is compared with) and unix; add the one that is missing", setting.Paths, joinPaths(p.paths())))
	}
	if p.Baseline != "" && !seen[p.Baseline] {
		why = append(why, setting.Err("%s %s: the baseline must be one of the paths measured (%s %s)", setting.Baseline, p.Baseline, setting.Paths, joinPaths(p.paths())))
	}
	why = append(why, p.hopsServed()...)
	if ok, reason := supply.IPv6Loopback(); seen[drivers.TCP6] && !ok {
		why = append(why, setting.Err("%s %s: %s; leave tcp6 out", setting.Paths, joinPaths(p.paths()), reason))
	}
	why = append(why, p.providerServes()...)
	return joinReasons(why)
}

// joinReasons is every reason in why as one error of one line, or nil.
func joinReasons(why []error) error {
	if len(why) == 0 {
		return nil
	}
	args := make([]any, len(why))
	for i, e := range why {
		args[i] = e
	}
	return setting.Err(strings.Repeat("%w; ", len(why)-1)+"%w", args...)
}

func pathStrings(ts []drivers.Transport) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// ValidateProvider checks the paths against the plan's provider, when it
// can say what it serves (supply.PathServer): a path it serves for none
// of the targets is refused. Validate calls it; a caller that makes the
// provider after validating the rest of the plan calls it then.
func (p Plan) ValidateProvider() error {
	return joinReasons(p.providerServes())
}

// providerServes says, for each path the provider serves for none of the
// targets, why.
func (p Plan) providerServes() []error {
	ps, ok := p.Provider.(supply.PathServer)
	if !ok {
		return nil
	}
	var names []string
	for _, t := range p.Targets {
		names = append(names, t.Name)
	}
	var why []error
	for _, t := range p.paths() {
		if !drivers.IsPath(t) {
			continue
		}
		if err := ps.CannotServe(t.Route(), names); err != nil { // a control as the path it repeats
			why = append(why, setting.Err("%s %s with %s %s: the %s path cannot be measured: %w; leave %s out", setting.Paths, joinPaths(p.paths()),
				setting.Provider, p.ProviderName, t, err, t))
		}
	}
	return why
}

// hopsServed says why a path with a hop's leg cannot be measured: no
// target of the run has a hop in front of its server, or the provider is
// not one that starts the hop itself: the local one, or docker for a hop
// whose container names its legs. The hop dbsock starts is the one whose
// legs it knows: a pooler the user runs may reach its server by another
// leg than the path names.
func (p Plan) hopsServed() []error {
	hop := slices.ContainsFunc(p.Targets, func(t *targets.Target) bool { return t.Hop })
	var why []error
	for _, t := range p.paths() {
		switch {
		case t.Info().Hop == "":
		case !hop:
			why = append(why, setting.Err("%s %s: the %s path runs through a hop in front of the server, and no target of this run has one; use --via (%s) or leave %s out", setting.Paths, joinPaths(p.paths()), t, targets.HopPhrase(), t))
		case p.ProviderName != "local" && !(p.ProviderName == "docker" && containersServeHops(p.Targets)):
			why = append(why, setting.Err("%s %s with %s %s: the %s path is served by a hop dbsock starts, on this host or in a container of its own; add %s local (or docker) or leave %s out", setting.Paths, joinPaths(p.paths()), setting.Provider, cmp.Or(p.ProviderName, "auto"), t, setting.Provider, t))
		}
	}
	return why
}

// containersServeHops says whether every hop among ts names its legs in
// its container (supply.Container.Hops), as the docker provider starts it.
func containersServeHops(ts []*targets.Target) bool {
	return !slices.ContainsFunc(ts, func(t *targets.Target) bool {
		return t.Hop && (t.Container == nil || t.Container.Hops == nil)
	})
}

func joinPaths(ts []drivers.Transport) string {
	var s []string
	for _, t := range ts {
		s = append(s, string(t))
	}
	return strings.Join(s, ",")
}

// validatePlacements refuses a run under several placements that dbsock
// cannot pin in turn: servers of yours, which it does not pin, and a
// client container, pinned where it starts.
func (p Plan) validatePlacements() error {
	if len(p.Placements) < 2 {
		return nil
	}
	names := make([]string, len(p.Placements))
	for i, pl := range p.Placements {
		names[i] = pl.Mode
	}
	switch {
	case p.ProviderName == "external":
		return setting.Err("%s %s pins the servers for each placement in turn, and dbsock pins only the servers it starts: give one placement with %s external", setting.Placement, strings.Join(names, ","), setting.Provider)
	case p.Client.Remote != nil:
		return setting.Err("%s %s: the client container is pinned where it starts; give one placement with %s container", setting.Placement, strings.Join(names, ","), setting.Client)
	}
	return nil
}
