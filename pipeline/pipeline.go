// Package pipeline is dbsock's one pipeline, read top to bottom in Run:
// supply each target's server (package supply), seed it and ask what it is
// (package drivers), measure every case over both transports (package
// scenarios, the one timing loop), summarize (package results), check the
// thresholds, and render (package reports, through Plan.Output.Render). Nothing
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

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/machinelock"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/internal/visible"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

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
// threshold is not an error here: it is in the report's Thresholds. It
// first takes the machine's measuring lock (package machinelock), waiting
// while another measurement on this machine holds it.
func Run(ctx context.Context, p Plan) (*results.Report, error) {
	release, err := machinelock.Acquire(ctx, p.Output.Log) // one measurement on this machine at a time
	if err != nil {
		return p.newReport(), err
	}
	defer release()
	n := p.InstancesPerCase()
	if n > p.Instances {
		fmt.Fprintf(p.log(), "dbsock: %d comparisons: %d server instances per case rather than %d, so that the sign test over them can pass Holm's adjustment for all of them\n",
			p.comparisons(), n, p.Instances)
	}
	p.Instances = n
	rep := p.newReport()
	rep.Environment.HostFacts(p.Output.Host) // measured while this run holds the machine
	if err := p.Validate(); err != nil {
		return rep, err
	}
	if w := p.holmWarning(); !w.IsZero() {
		fmt.Fprintf(p.log(), "dbsock: %s\n", w.In(p.Output.Name))
	}
	var errs []error
	if len(p.Placement.Client) > 0 && len(p.Placements) < 2 { // several: each placement's turn pins (placements.go)
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
	rep.Config.Placements = p.placementRecords()
	if p.agentStacks() {
		rep.Config.Clients = p.clients()
	}
	if len(p.paths()) > 2 {
		rep.Config.Paths = p.paths()
	}
	if p.Baseline != drivers.TCP {
		rep.Config.Baseline = p.Baseline
	}
	if p.Loop.Precision > 0 {
		rep.Config.MaxDurationNs = p.Loop.MaxDuration.Nanoseconds()
	}
	for _, t := range p.Targets {
		ti := results.Target{Name: t.Name, Layer: t.Layer}
		switch {
		case p.FailFast && len(errs) > 0:
			ti.Fail(setting.Err("not run: an earlier target failed (%s)", setting.FailFast))
		case ctx.Err() != nil:
			err := fmt.Errorf("not run: interrupted (%w)", ctx.Err())
			ti.Fail(err)
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
		default:
			runs, err := p.measureTarget(ctx, t, &ti, rep.StartedAt)
			rep.Runs = append(rep.Runs, runs...)
			if err != nil {
				ti.Fail(err)
				errs = append(errs, setting.Err("%s: %w", t.Name, err))
			}
		}
		rep.Targets = append(rep.Targets, ti)
	}
	rep.FinishedAt = time.Now().UTC()
	fillGoClients(rep)
	if err := rep.Summarize(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, p.errorRates(rep)...)
	rep.Thresholds = results.Evaluate(rep, p.Gates.Thresholds)
	if p.Output.Render != nil {
		if err := p.Output.Render(rep); err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

func (p Plan) newReport() *results.Report {
	o := p.Loop
	env := sysinfo.Collect(p.Output.Libraries)
	env.Host = p.Output.Host
	return &results.Report{
		SchemaVersion: results.SchemaVersion,
		Tool:          sysinfo.Self(),
		StartedAt:     time.Now().UTC(),
		Environment:   env, // its host facts measured once the run holds the machine (Run)
		Config: results.Config{N: o.N, Warmup: o.Warmup, Rounds: o.Rounds, Instances: max(p.Instances, 1),
			Provider: p.ProviderName, Client: p.clientName(), Scenario: strings.Join(p.scenarios(), ","), DurationNs: o.Duration.Nanoseconds(),
			Sweep: results.Sweep{Concurrency: p.Sweep.Concurrency, ValueSizes: p.Sweep.ValueSizes, Rate: o.Rate, Rates: p.Sweep.Rates,
				SLO: p.SLO, RateAuto: p.RateAuto},
			Pipelines: p.Sweep.Pipelines, Blocks: o.BlocksPerRound(), Seed: o.Seed, Goal: results.Goal{Precision: o.Precision}, Workload: p.workloadRecord()},
		Targets: []results.Target{},
		Runs:    []results.Run{},
	}
}

// workloadRecord is the report's account of the workload (nil when the
// ops read one row, as a Plan without Rows does).
func (p Plan) workloadRecord() *results.Workload {
	o := p.Loop
	own := true
	for _, t := range p.Targets {
		own = own && t.Own
	}
	if p.Workload.Rows <= 0 || own {
		return nil
	}
	k := o.Keys
	w := &results.Workload{Rows: p.Workload.Rows, Keys: k.Dist, Op: o.Op, Mix: o.Mix.String()}
	for name, q := range p.Workload.Queries {
		if w.Query == nil {
			w.Query = map[string]string{}
		}
		w.Query[name] = q
	}
	for name, ks := range p.Workload.KeysFrom {
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

func (p Plan) clientName() string {
	switch {
	case p.Client.Remote == nil:
		return "host"
	case p.Client.Place == "":
		return "remote"
	}
	return p.Client.Place
}

// placementRecord is the run's placement as the report records it: its
// client's CPUs read back from the OS, or under several placements (each
// turn pins its own: Config.Placements) the first's as it is named.
func (p Plan) placementRecord() results.Placement {
	rec := results.Placement{Mode: p.Placement.Mode, ServerCPUs: placement.FormatList(p.Placement.Server), Reason: p.Placement.Reason}
	if len(p.Placements) > 1 {
		rec.ClientCPUs = placement.FormatList(p.Placements[0].Client)
	} else if cpus, err := placement.Affinity(0); err == nil {
		rec.ClientCPUs = placement.FormatList(cpus)
	}
	return rec
}

// measureTarget supplies t's server, records what it is into ti, and
// measures every case, each block's start recorded from epoch; the server
// is stopped before it returns.
func (p Plan) measureTarget(ctx context.Context, t *targets.Target, ti *results.Target, epoch time.Time) (runs []results.Run, err error) {
	log := p.log()
	settings := p.settings(t)
	d := settings.Driver(p.workload(t.Name, 0, p.Workload.Rows, nil))
	if sizes := p.valueSizes(); len(sizes) == 1 {
		d = settings.Driver(p.workload(t.Name, sizes[0], p.Workload.Rows, nil)) // the operation line names the size measured
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
	fmt.Fprintf(log, "dbsock: %s: %s from %s, ready in %s\n", t.Name, visible.Line(info.String()), visible.Line(srv.Origin), time.Since(began).Round(time.Millisecond))
	paths := p.pathsOf(srv, ti)
	if len(paths) == 0 {
		return nil, setting.Err("its server serves none of the paths asked (%s %s: its warnings say why); give %s with the routes it serves (a hop's: docs/paths.md)", setting.Paths, joinPaths(p.paths()), setting.Paths)
	}
	var rc *remoteClient
	if p.Client.Remote != nil {
		if rc, err = p.startClient(ctx, t, srv, ti); err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, rc.stop()) }()
	}
	keys, err := p.userKeys(ctx, t, d, srv, ti)
	if err != nil {
		return nil, err
	}
	rows := p.rows(d, info, ti, len(keys))
	if rows < len(keys) {
		keys = keys[:rows]
	}
	if rows != p.Workload.Rows {
		ti.Rows = rows
		size := 0
		if sizes := p.valueSizes(); len(sizes) == 1 {
			size = sizes[0]
		}
		ti.Operation = settings.Driver(p.workload(t.Name, size, rows, keys)).Describe()
	}
	cs, stopClients, err := p.startClients(ctx, t, ti, rc)
	defer func() { err = errors.Join(err, p.teardown(t, ti, stopClients())) }()
	if err != nil {
		return nil, err
	}
	tr := &targetRun{t: t, settings: settings, srv: srv, ti: ti, paths: paths, info: info, rows: rows, keys: keys, clients: cs, epoch: epoch}
	err = p.measureCases(ctx, tr, func(run results.Run) {
		runs = append(runs, run)
		logRun(log, run)
	})
	warnUnaudited(ti, runs)
	return runs, err
}

// targetRun is what measuring one target's cases needs: its server, what
// it is, its paths and rows, the client stacks it is measured from, and
// when the report began (each block's start is recorded from it).
type targetRun struct {
	t        *targets.Target
	settings targets.Settings
	srv      *supply.Server
	ti       *results.Target
	paths    drivers.Paths
	info     drivers.ServerInfo
	rows     int
	keys     []string
	clients  []stackClient
	epoch    time.Time
}

// measureCases seeds tr's server for each value size and measures every
// case of it from each client stack in turn; emit receives every run.
func (p Plan) measureCases(ctx context.Context, tr *targetRun, emit func(results.Run)) error {
	t, srv := tr.t, tr.srv
	for _, size := range p.valueSizes() {
		w := p.workload(t.Name, size, tr.rows, tr.keys)
		d := tr.settings.Driver(w)
		if err := p.seed(ctx, t, d, srv, tr.rows); err != nil {
			return err
		}
		if err := p.checkStatement(ctx, t, d, srv); err != nil {
			return err
		}
		fmt.Fprintf(p.log(), "dbsock: %s: %d rows seeded, measuring\n", t.Name, tr.rows)
		for _, depth := range p.depths() {
			d := d
			if pl, ok := d.(drivers.Pipeliner); ok && depth > 1 {
				d = pl.Pipeline(depth)
			}
			for _, cs := range p.cases() {
				cs.Rows = tr.rows
				_, cs.OwnQuery = p.Workload.Queries[t.Name]
				loops, err := p.stackLoops(tr, w, d, depth)
				if err != nil {
					return err
				}
				measure := p.measureCase
				if p.RateAuto {
					measure = p.searchRates
				}
				if err := measure(ctx, tr, d, cs, loops, emit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// caseLoop runs one server instance of a case from one client stack
// (scenarios.Run with the plan's Loop settings, here, in the remote client
// or in an agent).
type caseLoop func(context.Context, scenarios.Case, scenarios.Instance, func(results.Run)) error

// stackLoops are the loops of a case (d at pipeline depth depth), one per
// client stack of tr, in the order Plan.Client.Stacks names them.
func (p Plan) stackLoops(tr *targetRun, w drivers.Workload, d drivers.Driver, depth int) ([]caseLoop, error) {
	var loops []caseLoop
	for _, c := range tr.clients {
		loop := p.loop(d, tr.srv, tr.paths, tr.info)
		if c.agent != nil {
			var err error
			if loop, err = agentLoop(c, d, tr.srv, tr.paths, tr.info, p.Loop); err != nil {
				return nil, err
			}
		}
		loops = append(loops, loop)
	}
	return loops, nil
}

// measureCase measures case c of tr's target on each server instance in
// turn, restarting its server between instances where it can. On each
// instance every client stack's loop runs its rounds, one stack after
// another in an order that rotates from one instance to the next, so
// that the stacks share their server instances and no stack always runs
// first on a fresh one; emit receives every run.
func (p Plan) measureCase(ctx context.Context, tr *targetRun, d drivers.Driver, c scenarios.Case, loops []caseLoop, emit func(results.Run)) error {
	srv := tr.srv
	restart := p.canRestart(srv, tr.ti)
	turns := p.turnsFor(tr)
	for inst := 1; inst <= max(p.Instances, 1); inst++ {
		if inst > 1 && restart {
			if err := p.restart(ctx, tr.t, d, srv, c.Rows, inst); err != nil {
				return err
			}
		}
		in := scenarios.Instance{Number: inst, ClientCPU: cpustat.Self{}, ServerCPU: srv.CPU, ServerCPUWhyNot: srv.CPUWhyNot, HopCPU: srv.HopCPU,
			Epoch: tr.epoch, Progress: p.Output.Progress}
		for _, pl := range turns {
			if err := p.measureTurn(ctx, srv, c, in, loops, pl, placed(emit, pl)); err != nil {
				return err
			}
		}
	}
	return nil
}

// measureTurn runs instance in of case c from every stack's loop, under
// placement pl (nil: as the run is placed), the stacks in an order that
// rotates from one instance to the next.
func (p Plan) measureTurn(ctx context.Context, srv *supply.Server, c scenarios.Case, in scenarios.Instance, loops []caseLoop, pl *placement.Placement, emit func(results.Run)) error {
	restore, err := p.place(pl, srv)
	if err != nil {
		return err
	}
	defer restore()
	for k := range loops {
		if err := loops[(in.Number-1+k)%len(loops)](ctx, c, in, emit); err != nil {
			return err
		}
	}
	return nil
}

// loop runs one instance of a case with d in this process.
func (p Plan) loop(d drivers.Driver, srv *supply.Server, paths drivers.Paths, info drivers.ServerInfo) caseLoop {
	return func(ctx context.Context, c scenarios.Case, in scenarios.Instance, emit func(results.Run)) error {
		return scenarios.Run(ctx, d, srv.Current(paths), info, p.Loop, c, in, emit)
	}
}

func logRun(log io.Writer, run results.Run) {
	if run.Error != "" {
		return
	}
	round := fmt.Sprintf("round %d", run.Round)
	if run.Instance > 1 {
		round = fmt.Sprintf("instance %d %s", run.Instance, round)
	}
	// The label holds an agent's mode as its hello said it, the evidence
	// the server's own words: both are shown as text.
	fmt.Fprintf(log, "dbsock: %s %s %s %-4s: p50 %s, mean %s, %d ops (%s)\n", run.Target, visible.Line(run.Label()), round, run.Transport,
		time.Duration(run.Latency.P50), time.Duration(run.Latency.Mean).Round(time.Nanosecond), run.N, visible.Line(run.Evidence))
}

// workload is what target's ops read for values of size bytes; seeding
// reports its progress on the log.
func (p Plan) workload(target string, size, rows int, keys []string) drivers.Workload {
	w := drivers.Workload{ValueSize: size, Rows: rows, Op: p.Loop.Op, Query: p.Workload.Queries[target], Keys: keys}
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

// errorRates fails every side of every case (each path it measured)
// whose ops failed more often than MaxErrorRate allows, saying how often
// and the last error.
func (p Plan) errorRates(rep *results.Report) []error {
	if p.Gates.MaxErrorRate < 0 {
		return nil
	}
	var errs []error
	for _, s := range rep.Summary {
		for _, ps := range s.Sides {
			t, side := ps.Path, ps.Side
			if side.N == 0 || side.ErrorRate <= p.Gates.MaxErrorRate {
				continue
			}
			last := ""
			for _, run := range rep.Runs {
				if run.Case == s.Case && run.Transport == t && run.Error != "" {
					last = run.Error
				}
			}
			errs = append(errs, setting.Err("%s %s: %d of %d ops failed over %s (%.3g%%, above %s %.3g%%): %s",
				s.Target, s.Label(), side.Errors, side.N, t.Label(), 100*side.ErrorRate, setting.MaxErrors, 100*p.Gates.MaxErrorRate, last))
		}
	}
	return errs
}

// rows is how many rows d's target reads: the plan's (or how many keys of
// its own the user gave, when userKeys is above 0), unless its server
// reads many too slowly to measure: then the driver's limit, with a
// warning on the target saying why.
func (p Plan) rows(d drivers.Driver, info drivers.ServerInfo, ti *results.Target, userKeys int) int {
	rows := p.Workload.Rows
	if userKeys > 0 {
		rows = userKeys
	}
	if rl, ok := d.(drivers.RowLimiter); ok && rows > 0 {
		if limit, why := rl.RowLimit(info); limit > 0 && rows > limit {
			ti.Warnings = append(ti.Warnings, results.Warn(results.RowsLimited, "%s (%s was %d).", why, setting.Rows, rows))
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
	return t.Settings()
}

func (p Plan) log() io.Writer {
	if p.Output.Log == nil {
		return io.Discard
	}
	return p.Output.Log
}

func (p Plan) scenarios() []string {
	if len(p.Sweep.Scenarios) == 0 {
		return []string{scenarios.PK}
	}
	return p.Sweep.Scenarios
}

func (p Plan) depths() []int {
	if len(p.Sweep.Pipelines) == 0 {
		return []int{1}
	}
	return p.Sweep.Pipelines
}

func (p Plan) valueSizes() []int {
	if len(p.Sweep.ValueSizes) == 0 {
		return []int{0}
	}
	return p.Sweep.ValueSizes
}

// cases lists the case of every scenario and concurrency, in order, with
// the plan's rows (a target may read fewer: measureCases says).
func (p Plan) cases() []scenarios.Case {
	conc := p.Sweep.Concurrency
	if len(conc) == 0 {
		conc = []int{1}
	}
	rates := p.Sweep.Rates
	if len(rates) == 0 {
		rates = []float64{0} // Loop.Rate
	}
	var out []scenarios.Case
	for _, s := range p.scenarios() {
		for _, c := range conc {
			for _, r := range rates {
				out = append(out, scenarios.Case{Scenario: s, Concurrency: c, Rows: p.Workload.Rows, Offered: r})
			}
		}
	}
	return out
}

// Cases is how many cases each target runs.
func (p Plan) Cases() int { return len(p.cases()) * len(p.valueSizes()) * len(p.depths()) }
