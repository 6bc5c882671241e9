package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// runOptions are the flags of "dbsock run".
type runOptions struct {
	loop       loopOptions
	instances  int
	sweep      sweepOptions
	workload   workloadOptions
	paths      []string
	baseline   string
	via        string // a hop in front of the server (--via)
	servers    serverOptions
	place      placementOptions
	client     clientOptions
	explain    bool
	layers     []string // the targets --explain added to the run
	thresholds []string
	failFast   bool
	output     outputOptions
	quiet      bool
	host       string // --host: this host's label in the report
	flags      *pflag.FlagSet

	// settings are each target's own settings (driver modes, external
	// endpoints), its flags bound on them from the registry.
	settings map[string]targets.Settings
}

// Providers accepted by --provider.
var providers = []string{"auto", "docker", "compose", "local", "external"}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run TARGET... [flags]",
		Short: "Measure primary-key lookups over 127.0.0.1 TCP and over a Unix socket",
		Long: `Run measures each TARGET over 127.0.0.1 TCP and over its Unix domain socket.
Each server is measured as --instances server instances (restarted between
them; a server you run, which dbsock cannot restart, gets fresh connections
to its one process instead, and the report says that the interval covers
that process only). Each round opens
one connection per transport (per worker), verifies it on the server side
and warms it up; then the round's N lookups per transport, each timed on
its own, run as --blocks short TCP blocks and as many Unix blocks,
interleaved in pairs whose order is drawn from --seed. An instance's
speedup is the median TCP/Unix ratio over its block pairs; the speedup
reported is the median over instances, with a distribution-free 95%
interval over instances (over block pairs with one instance), so that
neither a few seconds of noise nor one lucky server start can flip it.
--paths adds routes beside those two (tcp6, tls, and with --provider
docker or compose the routes through Docker's networks), each compared
with TCP the same way.
--clients measures each target from other client stacks too (C, Python,
Node.js, PHP: agents under agents/, installed by scripts/install-deps.sh
--with-stacks), each (target, stack) a case of its own.

Targets (dbsock targets lists them with what one op is):
` + targetHelp() + `
Providers:
  docker    start containers (testcontainers-go) with host networking, the
            server on 127.0.0.1 only and its socket dir bind-mounted; official
            images ` + imageList(func(c *supply.Container) string { return c.Image }) + `,
            or --image TARGET=REF; make images builds
            ` + imageList(func(c *supply.Container) string { return c.Offline }) + `,
            used when the official ones cannot be pulled
  compose   the same from compose/compose.yaml with Docker Compose
  local     start private throwaway servers from binaries on PATH (each
            target's, as dbsock targets lists them) and dbsock's own
            servers as child processes
  external  measure servers you already run: give both --TARGET-addr and
            --TARGET-socket` + socketDirs() + `
  auto      external for targets whose endpoints are given, else docker when
            an engine answers and the image is here or can be pulled, else local

Passwords: --TARGET-password-file FILE, or DBSOCK_TARGET_PASSWORD in the
environment (e.g. DBSOCK_MYSQL_PASSWORD); the --*-password flags work too,
but show in your shell history and process list. Servers dbsock starts get a
random password per run; no password is ever printed.`,
		Example: `  dbsock run mysql --n 10000
  dbsock run all --format json --out results.json
  DBSOCK_MYSQL_PASSWORD=secret dbsock run mysql --provider external \
    --mysql-addr 127.0.0.1:3306 --mysql-socket ` + wellKnownSocket("mysql") + ` --mysql-user app --mysql-db app`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return execRun(cmd.Context(), o, args, stdout, stderr)
		},
	}
	o.bind(cmd.Flags())
	return cmd
}

// parseTargets expands "all", rejects unknown names and drops repeats.
func parseTargets(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, usagef("no target given; use one or more of: %s, all (e.g. dbsock run mysql)", strings.Join(targets.Names(), ", "))
	}
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, a := range args {
		if a == "all" {
			for _, t := range targets.All() {
				add(t)
			}
			continue
		}
		if _, ok := targets.Lookup(a); !ok {
			return nil, usagef("%s; use one or more of: %s, all", unknownWord("target", a, append(targets.Names(), "all")), strings.Join(targets.Names(), ", "))
		}
		add(a)
	}
	return out, nil
}

// externalEndpoints reads each target's external endpoints from its flags
// and the environment, validating every address given.
func (o *runOptions) externalEndpoints() (map[string]supply.Pair, error) {
	pairs := map[string]supply.Pair{}
	for _, t := range targets.List() {
		p, err := o.settings[t.Name].External()
		if err != nil {
			return nil, usagef("%s", inWords(err))
		}
		if p.Given() {
			pairs[t.Name] = p
		}
	}
	return pairs, nil
}

// parse reads the flags that need more than pflag's parsing; whether the
// run they describe is valid is the plan's to say (pipeline.Plan.Validate).
func (o *runOptions) parse() error {
	// 0 is "unset" to the engine (the default, or one row): given on the
	// command line it is a mistake.
	for _, f := range []struct {
		name  string
		value int
	}{{"rows", o.workload.rows}, {"blocks", o.loop.blocks}, {"instances", o.instances}} {
		if o.flags.Changed(f.name) && f.value < 1 {
			return usagef("--%s %d is out of range; give 1 or more (leave it out for the default)", f.name, f.value)
		}
	}
	if o.loop.precisionSpec != "" {
		p, err := parsePercent(o.loop.precisionSpec)
		if err != nil || p == 0 {
			return usagef("--precision %q is not %s", o.loop.precisionSpec, scenarios.AcceptedPrecision())
		}
		o.loop.precision = p
	}
	if o.flags.Changed("paths") && len(o.paths) == 0 {
		return usagef("--paths \"\" names no path; give some of %s with tcp and unix among them (tcp,unix is the default)", drivers.PathNames())
	}
	if o.flags.Changed("clients") && len(o.client.stacks) == 0 {
		return usagef("--clients \"\" names no client stack; give some of %s (go alone is the default)", strings.Join(pipeline.ClientStacks(), ", "))
	}
	if err := oneOf("provider", o.servers.provider, providers...); err != nil {
		return err
	}
	if err := sysinfo.CheckHostLabel(o.host); o.flags.Changed("host") && err != nil {
		return usagef("--host %q %v; give a short name for this machine, as the report of several hosts will name its column (leave it out for the hostname)", o.host, err)
	}
	if err := o.validateClient(); err != nil {
		return err
	}
	for _, t := range targets.List() {
		if err := o.settings[t.Name].Validate(); err != nil {
			return usagef("%s", inWords(err))
		}
	}
	return nil
}

// validateClient checks --client and --client-binary.
func (o *runOptions) validateClient() error {
	if err := oneOf("client", o.client.place, clientPlaces...); err != nil {
		return err
	}
	if o.client.binary == "" {
		return nil
	}
	if o.client.place != "container" {
		return usagef("--client-binary is the dbsock that runs in the client container; give --client container too")
	}
	if err := supply.CheckClientBinary(o.client.binary); err != nil {
		return usagef("--client-binary %s", inWords(err))
	}
	return nil
}

// execRun carries out "dbsock run"; tests that only parse and validate
// (the command-line fuzz target) put planOnly here.
var execRun = runRun

// planOnly checks every flag and builds the plan, then stops: nothing is
// started.
func planOnly(_ context.Context, o *runOptions, args []string, _, _ io.Writer) error {
	_, provider, err := o.plan(args)
	if provider != nil {
		provider.Close()
	}
	return err
}

func runRun(ctx context.Context, o *runOptions, args []string, stdout, stderr io.Writer) error {
	plan, provider, err := o.plan(args)
	if err != nil {
		return err
	}
	defer provider.Close()
	if c, ok := provider.(*compose.Compose); ok && c.Keep {
		defer func() {
			fmt.Fprintf(stderr, "dbsock: --keep: the servers still run; remove them with: docker compose -p %s down -v\n", c.Project())
		}()
	}
	done := make(chan struct{})
	defer close(done)
	go secondSignal(ctx, done, provider, stderr)

	var bar *progress
	switch {
	case o.quiet:
		plan.Output.Log = io.Discard
	case isTerminal(stderr):
		total := int64(-1) // unknown with --duration: a spinner
		if o.sweep.duration == 0 {
			total = plan.TotalOps()
		}
		bar = startProgress(stderr, total)
		plan.Output.Log, plan.Output.Progress = bar, &bar.done
	default:
		plan.Output.Log = stderr
	}
	if w := plan.InstancesWarning(); !w.IsZero() {
		fmt.Fprintf(plan.Output.Log, "dbsock: %s\n", w.In(flagName))
	}
	outputs, plot, _ := o.output.resolve() // checked in plan
	plan.Output.Render = func(rep *results.Report) error {
		if bar != nil {
			bar.finish()
		}
		rep.Word(flagName) // its warnings and errors name the flags that set what they name
		// An interrupted run still writes what it measured: rendering is
		// not cut short by the Ctrl-C that ended the run (a second one
		// exits at once: secondSignal).
		return writeOutputs(renderContext(ctx), rep, outputs, plot, stdout, stderr)
	}
	rep, runErr := pipeline.Run(ctx, plan)
	if runErr != nil {
		return setting.Err("run failed: %w", runErr)
	}
	var violated []error
	for _, th := range rep.Thresholds {
		if !th.OK {
			violated = append(violated, fmt.Errorf("threshold %s violated: %s", th.Expr, th.ActualText))
		}
	}
	if len(violated) > 0 {
		return &exitError{code: ExitThreshold, err: errors.Join(violated...)} // a line each
	}
	return nil
}

// plan checks every flag and builds the pipeline's plan and the provider,
// before anything is started.
func (o *runOptions) plan(args []string) (pipeline.Plan, supply.Provider, error) {
	names, err := parseTargets(args)
	if err != nil {
		return pipeline.Plan{}, nil, err
	}
	if names, err = o.applyVia(names); err != nil {
		return pipeline.Plan{}, nil, err
	}
	if names, err = o.withLayers(names); err != nil {
		return pipeline.Plan{}, nil, err
	}
	if err := o.parse(); err != nil {
		return pipeline.Plan{}, nil, err
	}
	if _, _, err := o.output.resolve(); err != nil {
		return pipeline.Plan{}, nil, err
	}
	gates, err := o.parseCases(names)
	if err != nil {
		return pipeline.Plan{}, nil, err
	}
	if o.loop.seed == 0 {
		o.loop.seed = rand.Uint64()
	}
	place, places, err := o.resolvePlacement()
	if err != nil {
		return pipeline.Plan{}, nil, err
	}
	plan := o.newPlan(names, gates, place)
	plan.Placements, plan.PlacementsAuto = places, len(places) > 1 && o.bothPlacements()
	servers := place.Server
	if len(places) > 1 {
		servers = placement.ServerUnion(places) // each placement's turn pins the servers' processes within them
	}
	// The provider is made (nothing is started) before the plan is
	// validated, so that every reason a path cannot be measured, the
	// provider's among them, is given at once.
	if plan.Provider, err = o.newProvider(names, servers); err != nil {
		return pipeline.Plan{}, nil, err
	}
	if err := plan.Validate(); err != nil {
		plan.Provider.Close()
		return pipeline.Plan{}, nil, usagef("%s", inWords(err))
	}
	if err := o.checkEngine(); err != nil {
		plan.Provider.Close()
		return pipeline.Plan{}, nil, err
	}
	if err := o.checkHome(); err != nil {
		plan.Provider.Close()
		return pipeline.Plan{}, nil, err
	}
	return plan, plan.Provider, nil
}

// newPlan turns the parsed flags into the pipeline's plan (without its
// provider).
func (o *runOptions) newPlan(names []string, gates []results.Threshold, place placement.Placement) pipeline.Plan {
	opt := scenarios.Settings{N: o.loop.n, Warmup: o.loop.warmup, Rounds: o.loop.rounds, OpTimeout: o.loop.opTimeout,
		Duration: o.sweep.duration, Rate: o.sweep.rate, Seed: o.loop.seed,
		Precision: o.loop.precision, Keys: o.workload.keys, Op: o.workload.op, Mix: o.workload.mix}
	if !o.flags.Changed("n") {
		opt.N, opt.AutoN = scenarios.DefaultN(o.sweep.concurrency, o.sweep.maxRate()), true
		if len(o.sweep.rates) > 0 || o.sweep.rateAuto {
			opt.RateSeconds = scenarios.SweepSeconds
		}
	}
	if o.flags.Changed("blocks") {
		opt.Blocks = o.loop.blocks // else the default, at most --n
	}
	if o.loop.precision > 0 || o.flags.Changed("max-duration") {
		opt.MaxDuration = o.loop.maxDuration
	}
	plan := pipeline.Plan{
		ProviderName: o.servers.provider,
		Sweep: pipeline.Sweep{Scenarios: o.sweep.scenarios, Concurrency: o.sweep.concurrency, ValueSizes: o.sweep.sizes, Pipelines: o.sweep.pipelines,
			Rates: o.sweep.rates},
		SLO:      o.sweep.objective(),
		RateAuto: o.sweep.rateAuto,
		Loop:     opt,
		Workload: pipeline.Workload{Rows: o.workload.rows, Queries: o.workload.queries, KeysFrom: o.workload.keysFrom,
			AllowWrites: o.workload.allowWrites},
		Paths:          transports(o.paths),
		Baseline:       drivers.Transport(o.baseline),
		Instances:      o.instances,
		InstancesAsked: o.flags.Changed("instances"),
		Explain:        o.explain,
		Placement:      place,
		Output:         pipeline.Output{Libraries: targets.Libraries(), Name: flagName, Host: o.host}, // the log names the flags
		Gates:          pipeline.Gates{Thresholds: gates, MaxErrorRate: o.workload.maxErrorRate},
		FailFast:       o.failFast,
		Reach:          drivers.Reach,
		Settings:       o.settings,
		Client:         pipeline.ClientSide{Stacks: o.client.stacks, Remote: o.remoteClient(place.Client), Place: o.clientPlace(), GoAgent: o.goAgent()},
	}
	for _, name := range names {
		t, _ := targets.Lookup(name)
		plan.Targets = append(plan.Targets, t)
	}
	return plan
}

// withLayers adds, with --explain, the targets of the decomposition's
// layers (floor, echo) to names.
func (o *runOptions) withLayers(names []string) ([]string, error) {
	if !o.explain {
		return names, nil
	}
	for _, t := range targets.Explainers() {
		if !slices.Contains(names, t) {
			names = append(names, t)
			o.layers = append(o.layers, t)
		}
	}
	return names, nil
}

// resolvePlacement reads --placement, --client-cpu and --server-cpu: the
// run's placement, and with a list of them, each (the first is the
// run's).
func (o *runOptions) resolvePlacement() (placement.Placement, []placement.Placement, error) {
	resolve := placement.Resolve
	if o.sweep.atRate() {
		resolve = placement.ResolveAtRate // an open loop keeps off the servers' CPUs
	}
	list, err := placement.ResolveList(o.place.mode, o.place.clientCPU, o.place.serverCPU, resolve)
	if err == nil && o.bothPlacements() {
		list, err = placement.ResolveAuto()
	}
	if err != nil {
		return placement.Placement{}, nil, usagef("%s", inWords(err))
	}
	if len(list) > 1 {
		return list[0], list, nil
	}
	place := list[0]
	if len(place.Client) > 0 && len(place.Server) == 0 {
		// Servers would inherit the client's pinning: start them on every
		// CPU the client could use before it was pinned.
		if place.Server, err = placement.Affinity(0); err != nil {
			return place, nil, err
		}
	}
	return place, nil, nil
}

// bothPlacements says whether --placement auto measures each case placed
// shared and split (placement.ChooseBoth): at rest, on servers dbsock
// starts and pins (not a user's, whose CPUs are theirs), from a client on
// this host, with no CPU list given.
func (o *runOptions) bothPlacements() bool {
	return (o.place.mode == "auto" || o.place.mode == "") && o.place.clientCPU == "" && o.place.serverCPU == "" &&
		!o.sweep.atRate() && o.servers.provider != "external" && o.client.place != "container"
}

// parseCases parses the sweep, the workload and the thresholds.
func (o *runOptions) parseCases(names []string) ([]results.Threshold, error) {
	if err := o.sweep.parse(o.flags.Changed("n")); err != nil {
		return nil, err
	}
	if err := o.workload.parse(o.flags, names); err != nil {
		return nil, err
	}
	var gates []results.Threshold
	for _, expr := range o.thresholds {
		th, err := results.Parse(expr)
		if err != nil {
			return nil, usagef("--threshold: %v", err)
		}
		gates = append(gates, th)
	}
	return gates, nil
}

// secondSignal waits, once a run is interrupted, for another Ctrl-C or
// SIGTERM: then dbsock removes what it can at once and exits (its server
// processes die with it: they are started with Pdeathsig).
func secondSignal(ctx context.Context, done <-chan struct{}, provider supply.Provider, stderr io.Writer) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	select {
	case <-done:
	case <-sig:
		fmt.Fprintln(stderr, "dbsock: interrupted again: removing what dbsock started and stopping now")
		_ = provider.Close()
		os.Exit(ExitFailed)
	}
}

func (o *runOptions) newDocker(images map[string]string, cpus []int) *supply.Docker {
	d := supply.NewDocker()
	d.Images, d.ServerCPUs = images, cpus
	d.Routes, d.Service = o.routes()
	d.TLS = slices.ContainsFunc(o.paths, func(t string) bool { return drivers.Transport(t).Info().TLS })
	return d
}

// routes says whether the run measures a path through Docker's networks
// (published, bridge, service or pod: a second container of each server),
// and whether one dialed from a neighbour container (service) is among
// them.
func (o *runOptions) routes() (routes, service bool) {
	for _, t := range o.paths {
		p := drivers.Transport(t).Info()
		routes, service = routes || p.Docker, service || p.Neighbour
	}
	return routes, service
}

// containerNames lists the targets that run from an image.
func containerNames() []string {
	var out []string
	for _, t := range targets.Containers() {
		out = append(out, t.Name)
	}
	return out
}

// targetHelp lists the targets for run's help, from the registry.
func targetHelp() string {
	b := &strings.Builder{}
	for _, t := range targets.List() {
		fmt.Fprintf(b, "  %-9s %s\n", t.Name, t.Short)
	}
	fmt.Fprintf(b, "  %-9s %s\n", "all", strings.Join(targets.All(), " "))
	return b.String()
}

// socketDirs names, as " (--TARGET-socket-dir for a, b)", the targets
// whose socket flag gives a directory; "" when none does.
func socketDirs() string {
	var names []string
	for _, t := range targets.List() {
		if t.SocketFlag == "--"+t.Name+"-socket-dir" {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (--TARGET-socket-dir for " + strings.Join(names, ", ") + ")"
}

// wellKnownSocket is the first place packages put the sockets of target's
// servers, as the target registers it for doctor.
func wellKnownSocket(target string) string {
	if t, ok := targets.Lookup(target); ok && t.Doctor != nil && len(t.Doctor.WellKnown) > 0 {
		return t.Doctor.WellKnown[0]
	}
	return "PATH"
}

// imageList lists one image of every target that has one, each once (one
// hop's image stands in front of several servers).
func imageList(image func(*supply.Container) string) string {
	var out []string
	for _, t := range targets.Containers() {
		if i := image(t.Container); !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return strings.Join(out, ", ")
}

// parsePercent reads "3%" as 0.03, and a plain number as it is.
func parsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSuffix(t, "%"), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v * scale, nil
}

// pathsHelp is --paths' help, from the table of paths.
func pathsHelp() string {
	var each []string
	for _, p := range drivers.PathTable {
		each = append(each, string(p.Path)+" ("+p.Help+")")
	}
	return "the routes to each server to measure, in the report's order: " + strings.Join(each, ", ")
}

// transports are the --paths as the engine names them.
func transports(paths []string) []drivers.Transport {
	var ts []drivers.Transport
	for _, p := range paths {
		ts = append(ts, drivers.Transport(strings.TrimSpace(p)))
	}
	return ts
}
