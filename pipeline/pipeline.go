// Package pipeline is dbsock's one pipeline, read top to bottom in Run:
// supply each target's server (package compose), seed it and ask what it is
// (package drivers), measure every case over both transports (package
// scenarios, the one timing loop), summarize (package results), check the
// thresholds, and render (package reports, through Plan.Render). Nothing
// else orchestrates.
//
// It is part of dbsock's own machinery, and its API may change between
// versions: programs that measure their own code use package dbsock.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// Plan is one invocation: which targets, from which provider, which cases,
// how much, what to check and how to render.
type Plan struct {
	// Targets are the registry's targets to measure, in order.
	Targets []*targets.Target
	// Settings are each target's settings, read from its flags (a target
	// without an entry runs with its defaults).
	Settings     map[string]targets.Settings
	Provider     compose.Provider
	ProviderName string // as the user gave it, e.g. "auto"
	// Scenarios, Concurrency and ValueSizes span the sweep: every target
	// runs every combination. Empty means PK, 1 worker, the natural value.
	Scenarios   []string
	Concurrency []int
	ValueSizes  []int
	// Pipelines lists batch depths (lookups per op, in one round trip) for
	// targets whose driver is a drivers.Pipeliner; empty means 1.
	Pipelines []int
	// Options holds the loop sizes; its Scenario and Concurrency are set
	// per case.
	Options scenarios.Options
	// Instances is how many server instances each case measures: between
	// them the server is restarted (same endpoints, same data), and the
	// interval is computed over instances (results.InstanceSpeedup). A
	// server dbsock cannot restart (external) runs one instance with
	// Instances times the rounds, unless InstancesAsked: then it fails.
	Instances      int
	InstancesAsked bool
	// Placement pins the client (here) and names the servers' CPUs (the
	// provider pins those when it starts them).
	Placement placement.Placement
	// Libraries are the client libraries whose versions the report names.
	Libraries []string
	// Thresholds are checked against the summary after the run.
	Thresholds []results.Threshold
	// Render writes the finished report (nil: nothing is written).
	Render func(*results.Report) error
	// Log receives one line per step (server ready, run done); nil discards.
	Log io.Writer
	// FailFast stops at the first target that fails; otherwise the others
	// still run.
	FailFast bool
	// MaxErrorRate is the share of failed ops above which a case fails the
	// run (0: any failed op does; below 0: never).
	MaxErrorRate float64
	// Queries are the user's own ops by target (--query), KeysFrom their
	// own keys (--keys-from): a target with keys of its own gets no table.
	Queries  map[string]string
	KeysFrom map[string]KeySource
	// Reach, when set, is tried on an endpoint before a driver asks the
	// server anything there (dbsock uses drivers.Reach, a plain dial), so
	// that nothing listening is said at once.
	Reach func(context.Context, drivers.Endpoint) error
}

// StopTimeout bounds how long stopping one server may take; a server that
// stopped answering during the run is given HungStopTimeout (its provider
// then kills it rather than wait for it to shut down).
const (
	StopTimeout     = 20 * time.Second
	HungStopTimeout = 500 * time.Millisecond
)

// Run carries out p: supply -> seed -> measure -> summarize -> thresholds
// -> render. It always returns the report, holding every run measured; the
// error joins each target that failed and a failed render. A violated
// threshold is not an error here: it is in the report's Thresholds.
func Run(ctx context.Context, p Plan) (*results.Report, error) {
	rep := p.newReport()
	var errs []error
	if len(p.Placement.Client) > 0 {
		restore, err := placement.PinProcess(p.Placement.Client)
		if err != nil {
			return rep, err
		}
		defer func() {
			if err := restore(); err != nil {
				fmt.Fprintf(p.log(), "dbsock: %v\n", err)
			}
		}()
	}
	rep.Config.Placement = p.placementRecord()
	if p.Options.Precision > 0 {
		rep.Config.MaxDurationNs = p.Options.MaxDuration.Nanoseconds()
	}
	p.Options.Epoch = rep.StartedAt
	for _, t := range p.Targets {
		ti := results.Target{Name: t.Name, Layer: t.Layer}
		switch {
		case p.FailFast && len(errs) > 0:
			ti.Error = "not run: an earlier target failed (--fail-fast)"
		case ctx.Err() != nil:
			err := fmt.Errorf("not run: interrupted (%w)", ctx.Err())
			ti.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
		default:
			runs, err := p.measureTarget(ctx, t, &ti)
			rep.Runs = append(rep.Runs, runs...)
			if err != nil {
				ti.Error = err.Error()
				errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
			}
		}
		rep.Targets = append(rep.Targets, ti)
	}
	rep.FinishedAt = time.Now().UTC()
	if err := rep.Summarize(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, p.errorRates(rep)...)
	rep.Thresholds = results.Evaluate(rep, p.Thresholds)
	if p.Render != nil {
		if err := p.Render(rep); err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

func (p Plan) newReport() *results.Report {
	o := p.Options
	return &results.Report{
		SchemaVersion: results.SchemaVersion,
		Tool:          sysinfo.Self(),
		StartedAt:     time.Now().UTC(),
		Environment:   sysinfo.Collect(p.Libraries),
		Config: results.Config{N: o.N, Warmup: o.Warmup, Rounds: o.Rounds, Instances: max(p.Instances, 1),
			Provider: p.ProviderName, Scenario: strings.Join(p.scenarios(), ","), DurationNs: o.Duration.Nanoseconds(),
			Concurrency: p.Concurrency, ValueSizes: p.ValueSizes, Rate: o.Rate, Pipelines: p.Pipelines,
			Blocks: o.BlocksPerRound(), Seed: o.Seed, Precision: o.Precision, Workload: p.workloadRecord()},
		Targets: []results.Target{},
		Runs:    []results.Run{},
	}
}

// workloadRecord is the report's account of the workload (nil when the
// ops read one row, as a Plan without Rows does).
func (p Plan) workloadRecord() *results.Workload {
	o := p.Options
	own := true
	for _, t := range p.Targets {
		own = own && t.Own
	}
	if o.Rows <= 0 || own {
		return nil
	}
	k := o.Keys
	w := &results.Workload{Rows: o.Rows, Keys: k.Dist, Op: o.Op, Mix: o.Mix.String()}
	for name, q := range p.Queries {
		if w.Query == nil {
			w.Query = map[string]string{}
		}
		w.Query[name] = q
	}
	for name, ks := range p.KeysFrom {
		if w.KeysFrom == nil {
			w.KeysFrom = map[string]string{}
		}
		w.KeysFrom[name] = ks.String()
	}
	if w.Op == "" {
		w.Op = drivers.OpRead
	}
	if w.Keys == "" {
		w.Keys = scenarios.Uniform
	}
	switch k.Dist {
	case scenarios.Zipf:
		w.Theta = k.Theta
	case scenarios.Hotspot:
		w.HotRows, w.HotOps = k.Hot, k.Ops
	}
	return w
}

func (p Plan) placementRecord() results.Placement {
	rec := results.Placement{Mode: p.Placement.Mode, ServerCPUs: placement.FormatList(p.Placement.Server), Reason: p.Placement.Reason}
	if cpus, err := placement.Affinity(0); err == nil {
		rec.ClientCPUs = placement.FormatList(cpus)
	}
	return rec
}

// measureTarget supplies t's server, records what it is into ti, and
// measures every case; the server is stopped before it returns.
func (p Plan) measureTarget(ctx context.Context, t *targets.Target, ti *results.Target) (runs []results.Run, err error) {
	log := p.log()
	settings := p.settings(t)
	d := settings.Driver(p.workload(t.Name, 0, p.Options.Rows, nil))
	if sizes := p.valueSizes(); len(sizes) == 1 {
		d = settings.Driver(p.workload(t.Name, sizes[0], p.Options.Rows, nil)) // the operation line names the size measured
	}
	ti.Operation, ti.ConnectPhase = d.Describe(), d.ConnectPhase()
	began := time.Now()
	srv, err := p.Provider.Supply(ctx, t.Supply())
	if err != nil {
		return nil, err
	}
	if srv.Serving == "" {
		srv.Serving = t.Serving
	}
	defer func() { err = errors.Join(err, stopServer(t, srv, err)) }()
	if err := describeServer(srv, ti); err != nil {
		return nil, err
	}
	info, err := p.identify(ctx, t, d, srv)
	if err != nil {
		return nil, err
	}
	ti.Server = info
	fmt.Fprintf(log, "dbsock: %s: %s from %s, ready in %s\n", t.Name, info, srv.Origin, time.Since(began).Round(time.Millisecond))
	keys, err := p.userKeys(ctx, t, d, srv)
	if err != nil {
		return nil, err
	}
	rows := p.rows(d, info, ti, len(keys))
	if rows < len(keys) {
		keys = keys[:rows]
	}
	if rows != p.Options.Rows {
		ti.Rows = rows
	}
	if rows != p.Options.Rows {
		size := 0
		if sizes := p.valueSizes(); len(sizes) == 1 {
			size = sizes[0]
		}
		ti.Operation = settings.Driver(p.workload(t.Name, size, rows, keys)).Describe()
	}
	for _, size := range p.valueSizes() {
		d := settings.Driver(p.workload(t.Name, size, rows, keys))
		if err := p.seed(ctx, t, d, srv, rows); err != nil {
			return runs, err
		}
		if err := p.checkStatement(ctx, t, d, srv); err != nil {
			return runs, err
		}
		for _, depth := range p.depths() {
			d := d
			if pl, ok := d.(drivers.Pipeliner); ok && depth > 1 {
				d = pl.Pipeline(depth)
			}
			for _, opt := range p.cases() {
				opt.Rows = rows
				_, opt.OwnQuery = p.Queries[t.Name]
				restart := p.canRestart(srv, ti)
				for inst := 1; inst <= max(p.Instances, 1); inst++ {
					if inst > 1 && restart {
						if err := p.restart(ctx, t, d, srv, rows, inst); err != nil {
							return runs, err
						}
					}
					opt.Instance = inst
					opt.ClientCPU, opt.ServerCPU, opt.ServerCPUWhyNot = cpustat.Self{}, srv.CPU, srv.CPUWhyNot
					err := scenarios.Run(ctx, d, srv.Endpoints(), info, opt, func(run results.Run) {
						runs = append(runs, run)
						logRun(log, run)
					})
					if err != nil {
						return runs, err
					}
				}
			}
		}
	}
	return runs, nil
}

// canRestart says whether srv is restarted between instances. A server
// dbsock cannot restart (one it did not start) gets its instances as
// fresh connections to the one server process, and ti a warning that the
// interval covers that process only; asked for by the user, the restart
// fails instead.
func (p Plan) canRestart(srv *compose.Server, ti *results.Target) bool {
	if p.Instances <= 1 || srv.CanRestart() || p.InstancesAsked {
		return true
	}
	w := fmt.Sprintf("dbsock did not start this server (provider %s), so it could not restart it: its %d instances are %d sets of fresh connections "+
		"to one server process, and the interval covers that process only.", srv.Provider, p.Instances, p.Instances)
	if len(ti.Warnings) == 0 || ti.Warnings[len(ti.Warnings)-1] != w {
		ti.Warnings = append(ti.Warnings, w)
	}
	return false
}

// restart starts instance inst of t's server: it restarts the server,
// checks that the same server answers on both endpoints, seeds it again
// when it keeps nothing over a restart (t.Volatile: Redis as dbsock runs
// it starts empty), and waits for it to go idle.
func (p Plan) restart(ctx context.Context, t *targets.Target, d drivers.Driver, srv *compose.Server, rows, inst int) error {
	began, pid := time.Now(), srv.PID
	if err := srv.Restart(ctx); err != nil {
		return fmt.Errorf("start server instance %d of %d: %w", inst, p.Instances, err)
	}
	process := ""
	if pid > 0 {
		process = fmt.Sprintf(" (pid %d, was %d)", srv.PID, pid)
	}
	if _, err := p.identify(ctx, t, d, srv); err != nil {
		return fmt.Errorf("server instance %d of %d: %w", inst, p.Instances, err)
	}
	if t.Volatile {
		if err := p.seed(ctx, t, d, srv, rows); err != nil {
			return fmt.Errorf("server instance %d of %d: %w", inst, p.Instances, err)
		}
	} else if waited, idle := settle(ctx, srv.CPU); waited > 200*time.Millisecond {
		fmt.Fprintf(p.log(), "dbsock: %s: waited %s after the restart for the server to go idle (%v)\n", t.Name, waited.Round(time.Millisecond), idle)
	}
	fmt.Fprintf(p.log(), "dbsock: %s: server instance %d of %d ready in %s%s\n", t.Name, inst, p.Instances, time.Since(began).Round(time.Millisecond), process)
	return nil
}

// stopServer stops srv once t's cases are done (or failed with err): a
// server that stopped answering gets no grace.
func stopServer(t *targets.Target, srv *compose.Server, err error) error {
	limit := StopTimeout
	if errors.Is(err, scenarios.ErrNoAnswer) {
		limit = HungStopTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if serr := srv.Stop(ctx); serr != nil {
		return fmt.Errorf("stop %s server: %w", t.Name, serr)
	}
	return nil
}

// identify asks the server what it is over each endpoint: both must be the
// same product, so that a socket of another kind of server (one target's
// socket given as another's) is said to be that before anything is timed.
func (p Plan) identify(ctx context.Context, t *targets.Target, d drivers.Driver, srv *compose.Server) (drivers.ServerInfo, error) {
	target := t.Name
	var infos [2]drivers.ServerInfo
	for i, ep := range []drivers.Endpoint{srv.TCP, srv.Unix} {
		err := p.answer(ctx, target, ep, firstContact, func(ctx context.Context) (err error) {
			infos[i], err = d.Info(ctx, ep)
			return err
		})
		if err != nil && ctx.Err() == nil && p.Reach != nil {
			// The first contact: say what really answers there (another
			// kind of server, or something that is no server at all).
			err = fmt.Errorf("%w; what answers at %s: %s", err, ep.Address, drivers.Sniff(ctx, ep))
		}
		if err != nil && i == 1 {
			return infos[0], fmt.Errorf("%s over %s is not the %s that answers on TCP %s: %w; is it another server's socket?",
				target, ep, infos[0], srv.TCP.Address, err)
		}
		if err != nil {
			return infos[0], err
		}
	}
	if a, b := infos[0], infos[1]; a.Product != b.Product || a.Version != b.Version {
		return a, fmt.Errorf("%s: TCP %s reaches %s but Unix %s reaches %s: dbsock compares the two transports of one server", target, srv.TCP, a, srv.Unix, b)
	}
	// Two processes of the same server (a second instance, another port)
	// would publish a difference between servers as one between
	// transports; where the server names itself, both must be the same.
	if a, b := infos[0], infos[1]; a.Instance != "" && b.Instance != "" && a.Instance != b.Instance && !srv.SeedEach && !t.SeedEach {
		return a, fmt.Errorf("%s: TCP %s and Unix %s reach two different servers (%s, and %s): dbsock compares the two transports of one server; give the socket of the server listening on %s",
			target, srv.TCP.Address, srv.Unix.Address, a.Instance, b.Instance, srv.TCP.Address)
	}
	return infos[0], nil
}

// answer runs step against ep under the op timeout, so that a server that
// accepts and never answers cannot hang dbsock; the error says which server
// did not answer, over what, during which step.
func (p Plan) answer(ctx context.Context, target string, ep drivers.Endpoint, during string, step func(context.Context) error) error {
	return p.answerWithin(ctx, p.Options.Timeout(), "--op-timeout", target, ep, during, step)
}

// answerWithin is answer with its own limit, which what names.
func (p Plan) answerWithin(ctx context.Context, limit time.Duration, what, target string, ep drivers.Endpoint, during string, step func(context.Context) error) error {
	// A plain dial first: a refused port or a missing socket gets its own
	// diagnosis, whatever the driver would make of it (some retry until
	// their deadline and report their whole topology).
	if p.Reach != nil {
		if err := drivers.Within(ctx, limit, func(ctx context.Context) error { return p.Reach(ctx, ep) }); err != nil &&
			ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s over %s: %w", target, ep, drivers.Explain(err, ep))
		}
	}
	err := drivers.Within(ctx, limit, step)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s over %s: interrupted %s: %w", target, ep, during, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s over %s did not answer within %s (%s) %s; is a %s server really listening there?", target, ep, limit, what, during, target)
	case strings.HasPrefix(during, firstContact):
		return drivers.ExplainFirst(err, ep)
	}
	return drivers.Explain(err, ep)
}

// firstContact is what dbsock does when it first asks a server anything.
const firstContact = "while dbsock asked what server it is"

// describeServer records where the server came from and checks its
// endpoints.
func describeServer(srv *compose.Server, ti *results.Target) error {
	ti.Provenance = srv.Provenance
	ti.Endpoints = []drivers.Endpoint{srv.TCP, srv.Unix}
	switch {
	case srv.PID > 0 && !placement.Supported:
		ti.ServerCPUs = placement.ErrNoAffinity.Error()
	case srv.PID > 0:
		cpus, err := placement.Affinity(srv.PID)
		if err != nil {
			return err
		}
		ti.ServerCPUs = placement.FormatList(cpus)
	case srv.CPUs != "":
		ti.ServerCPUs = srv.CPUs
	}
	for _, ep := range ti.Endpoints {
		if err := ep.Validate(); err != nil {
			return fmt.Errorf("%s endpoint: %w", ti.Name, err)
		}
	}
	return nil
}

func logRun(log io.Writer, run results.Run) {
	if run.Error != "" {
		return
	}
	round := fmt.Sprintf("round %d", run.Round)
	if run.Instance > 1 {
		round = fmt.Sprintf("instance %d %s", run.Instance, round)
	}
	fmt.Fprintf(log, "dbsock: %s %s %s %-4s: p50 %s, mean %s, %d ops (%s)\n", run.Target, run.Label(), round, run.Transport,
		time.Duration(run.Latency.P50), time.Duration(run.Latency.Mean).Round(time.Nanosecond), run.N, run.Evidence)
}

// workload is what target's ops read for values of size bytes; seeding
// reports its progress on the log.
func (p Plan) workload(target string, size, rows int, keys []string) drivers.Workload {
	w := drivers.Workload{ValueSize: size, Rows: rows, Op: p.Options.Op, Query: p.Queries[target], Keys: keys}
	if rows := w.RowCount(); rows >= 100_000 {
		log, began, step := p.log(), time.Now(), rows/10
		next := step
		w.Progress = func(done int) {
			if done >= next || done == rows {
				fmt.Fprintf(log, "dbsock: %s: seeded %d of %d rows (%s)\n", target, done, rows, time.Since(began).Round(time.Millisecond))
				next = done + step
			}
		}
	}
	return w
}

// errorRates fails every case side whose ops failed more often than
// MaxErrorRate allows, saying how often and the last error.
func (p Plan) errorRates(rep *results.Report) []error {
	if p.MaxErrorRate < 0 {
		return nil
	}
	var errs []error
	for _, s := range rep.Summary {
		for _, t := range drivers.Transports {
			side := s.TCP
			if t == drivers.Unix {
				side = s.Unix
			}
			if side.N == 0 || side.ErrorRate <= p.MaxErrorRate {
				continue
			}
			last := ""
			for _, run := range rep.Runs {
				if run.Case == s.Case && run.Transport == t && run.Error != "" {
					last = run.Error
				}
			}
			errs = append(errs, fmt.Errorf("%s %s: %d of %d ops failed over %s (%.2g%%, above --max-error-rate %.2g%%): %s",
				s.Target, s.Label(), side.Errors, side.N, t.Label(), 100*side.ErrorRate, 100*p.MaxErrorRate, last))
		}
	}
	return errs
}

// seed creates the rows d reads (over both endpoints when they reach two
// instances), under --op-timeout plus a millisecond per row, then waits
// for the server to settle: a database writes what was seeded back in the
// background, which would otherwise land in the first blocks.
func (p Plan) seed(ctx context.Context, t *targets.Target, d drivers.Driver, srv *compose.Server, rows int) error {
	over := []drivers.Endpoint{srv.Unix}
	if srv.SeedEach || t.SeedEach {
		over = append(over, srv.TCP)
	}
	limit := p.Options.Timeout() + time.Duration(max(rows, 1))*time.Millisecond
	for _, ep := range over {
		err := p.answerWithin(ctx, limit, "--op-timeout plus 1 ms per row", t.Name, ep, "while dbsock seeded the rows", func(ctx context.Context) error { return d.Seed(ctx, ep) })
		if err != nil {
			return err
		}
	}
	if waited, idle := settle(ctx, srv.CPU); waited > 0 {
		fmt.Fprintf(p.log(), "dbsock: %s: waited %s after seeding for the server to go idle (%v)\n", t.Name, waited.Round(time.Millisecond), idle)
	}
	return nil
}

// settle waits until the server's CPU use over a 100 ms window is below
// 5% of one core, at most 10 s; it says how long it waited and whether the
// server went idle. Without a meter it returns at once.
func settle(ctx context.Context, m cpustat.Meter) (time.Duration, bool) {
	if m == nil {
		return 0, true
	}
	const window = 100 * time.Millisecond
	began := time.Now()
	before, err := m.Read()
	for err == nil && ctx.Err() == nil && time.Since(began) < 10*time.Second {
		timer := time.NewTimer(window)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
		after, rerr := m.Read()
		if rerr != nil {
			break
		}
		if busy := after.Sub(before).CPUNs; busy < int64(window)/20 {
			return time.Since(began), true
		}
		before = after
	}
	return time.Since(began), false
}

// rows is how many rows d's target reads: the plan's (or how many keys of
// its own the user gave, when userKeys is above 0), unless its server
// reads many too slowly to measure: then the driver's limit, with a
// warning on the target saying why.
func (p Plan) rows(d drivers.Driver, info drivers.ServerInfo, ti *results.Target, userKeys int) int {
	rows := p.Options.Rows
	if userKeys > 0 {
		rows = userKeys
	}
	if rl, ok := d.(drivers.RowLimiter); ok && rows > 0 {
		if limit, why := rl.RowLimit(info); limit > 0 && rows > limit {
			ti.Warnings = append(ti.Warnings, why)
			return limit
		}
	}
	return rows
}

// settings are t's settings in this plan, or its defaults.
func (p Plan) settings(t *targets.Target) targets.Settings {
	if s, ok := p.Settings[t.Name]; ok {
		return s
	}
	return t.Settings(nil)
}

func (p Plan) log() io.Writer {
	if p.Log == nil {
		return io.Discard
	}
	return p.Log
}

func (p Plan) scenarios() []string {
	if len(p.Scenarios) == 0 {
		return []string{scenarios.PK}
	}
	return p.Scenarios
}

func (p Plan) depths() []int {
	if len(p.Pipelines) == 0 {
		return []int{1}
	}
	return p.Pipelines
}

func (p Plan) valueSizes() []int {
	if len(p.ValueSizes) == 0 {
		return []int{0}
	}
	return p.ValueSizes
}

// cases lists the loop options of every scenario and concurrency, in order.
func (p Plan) cases() []scenarios.Options {
	conc := p.Concurrency
	if len(conc) == 0 {
		conc = []int{1}
	}
	var out []scenarios.Options
	for _, s := range p.scenarios() {
		for _, c := range conc {
			opt := p.Options
			opt.Scenario, opt.Concurrency = s, c
			out = append(out, opt)
		}
	}
	return out
}

// Cases is how many cases each target runs.
func (p Plan) Cases() int { return len(p.cases()) * len(p.valueSizes()) * len(p.depths()) }
