// Package runner ties dbsock's pipeline together for one invocation:
// a provider supplies each target's server, its driver seeds it, the
// scenario measures both transports, and the runs land in one report.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/drivers/echo"
	grpcdrv "github.com/dbsock/dbsock/drivers/grpc"
	httpdrv "github.com/dbsock/dbsock/drivers/http"
	"github.com/dbsock/dbsock/drivers/mongo"
	"github.com/dbsock/dbsock/drivers/mysql"
	"github.com/dbsock/dbsock/drivers/postgres"
	"github.com/dbsock/dbsock/drivers/redis"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
)

// Targets lists every target in report order; All is what "all" means.
var (
	Targets = []string{"mysql", "redis", "mongo", "postgres", "echo", "grpc", "http"}
	All     = []string{"mysql", "redis", "mongo"}
)

// DriverOptions are the driver settings that change round trips.
type DriverOptions struct {
	MySQLMode     string // mysql.ModePrepared (default), ModeInterpolate, ModeDefault
	RedisProtocol int    // 2 or 3 (default)
	RedisIdentity bool   // send CLIENT SETINFO on connect
	MongoOp       string // mongo.OpFind (default) or OpPing
}

// Driver returns the driver for target with o, reading values of valueSize
// bytes (the driver's own small value when 0).
func Driver(target string, o DriverOptions, valueSize int) (drivers.Driver, bool) {
	switch target {
	case "mysql":
		return mysql.New(o.MySQLMode, valueSize), true
	case "redis":
		return redis.New(o.RedisProtocol, o.RedisIdentity, valueSize), true
	case "mongo":
		return mongo.New(o.MongoOp, valueSize), true
	case "echo":
		return echo.New(valueSize), true
	case "postgres":
		return postgres.New(valueSize), true
	case "grpc":
		return grpcdrv.New(), true
	case "http":
		return httpdrv.New(), true
	}
	return nil, false
}

// Plan is one invocation: which targets, from which provider, which cases,
// how much.
type Plan struct {
	Targets      []string
	Provider     compose.Provider
	ProviderName string // as the user gave it, e.g. "auto"
	// Scenarios, Concurrency and ValueSizes span the sweep: every target
	// runs every combination. Empty means PK, 1 worker, the natural value.
	Scenarios   []string
	Concurrency []int
	ValueSizes  []int
	Drivers     DriverOptions
	// Options holds the loop sizes; its Scenario and Concurrency are set
	// per case.
	Options scenarios.Options
	// Placement pins the client (here) and names the servers' CPUs (the
	// provider pins those when it starts them).
	Placement placement.Placement
	// Log receives one line per step (server ready, run done); nil discards.
	Log io.Writer
	// FailFast stops at the first target that fails; otherwise the others
	// still run.
	FailFast bool
}

// StopTimeout bounds how long stopping one server may take.
const StopTimeout = 20 * time.Second

// Run carries out p. It always returns a report holding every run measured,
// with Summary filled; the error joins each target that failed.
func Run(ctx context.Context, p Plan) (*results.Report, error) {
	log := p.Log
	if log == nil {
		log = io.Discard
	}
	rep := &results.Report{
		SchemaVersion: results.SchemaVersion,
		Tool:          sysinfo.Self(),
		StartedAt:     time.Now().UTC(),
		Environment:   sysinfo.Collect(),
		Config: results.Config{N: p.Options.N, Warmup: p.Options.Warmup, Rounds: p.Options.Rounds,
			Provider: p.ProviderName, Scenario: strings.Join(p.scenarios(), ","), DurationNs: p.Options.Duration.Nanoseconds(),
			Concurrency: p.Concurrency, ValueSizes: p.ValueSizes, Rate: p.Options.Rate},
		Targets: []results.Target{},
		Runs:    []results.Run{},
	}
	var errs []error
	if len(p.Placement.Client) > 0 {
		if err := placement.PinProcess(p.Placement.Client); err != nil {
			return rep, err
		}
	}
	rep.Config.Placement = results.Placement{Mode: p.Placement.Mode, ServerCPUs: placement.FormatList(p.Placement.Server)}
	if cpus, err := placement.Affinity(0); err == nil {
		rep.Config.Placement.ClientCPUs = placement.FormatList(cpus)
	}
	for _, target := range p.Targets {
		if p.FailFast && len(errs) > 0 {
			rep.Targets = append(rep.Targets, results.Target{Name: target, Error: "not run: an earlier target failed (--fail-fast)"})
			continue
		}
		if ctx.Err() != nil {
			err := fmt.Errorf("not run: interrupted (%w)", ctx.Err())
			rep.Targets = append(rep.Targets, results.Target{Name: target, Error: err.Error()})
			errs = append(errs, fmt.Errorf("%s: %w", target, err))
			continue
		}
		rep.Targets = append(rep.Targets, results.Target{Name: target})
		ti := &rep.Targets[len(rep.Targets)-1]
		if err := runTarget(ctx, p, target, rep, ti, log); err != nil {
			ti.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", target, err))
		}
	}
	rep.FinishedAt = time.Now().UTC()
	if err := rep.Summarize(); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

func (p Plan) scenarios() []string {
	if len(p.Scenarios) == 0 {
		return []string{scenarios.PK}
	}
	return p.Scenarios
}

func (p Plan) concurrency() []int {
	if len(p.Concurrency) == 0 {
		return []int{1}
	}
	return p.Concurrency
}

func (p Plan) valueSizes() []int {
	if len(p.ValueSizes) == 0 {
		return []int{0}
	}
	return p.ValueSizes
}

// Cases is how many cases each target runs.
func (p Plan) Cases() int {
	return len(p.scenarios()) * len(p.concurrency()) * len(p.valueSizes())
}

func runTarget(ctx context.Context, p Plan, target string, rep *results.Report, ti *results.Target, log io.Writer) (err error) {
	d, ok := Driver(target, p.Drivers, 0)
	if !ok {
		return fmt.Errorf("unknown target %q", target)
	}
	ti.Operation = d.Describe()
	ti.ConnectPhase = d.ConnectPhase()
	began := time.Now()
	srv, err := p.Provider.Supply(ctx, target)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		if serr := srv.Stop(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop %s server: %w", target, serr))
		}
	}()
	ti.Provider, ti.Origin = srv.Provider, srv.Origin
	ti.Image, ti.ImageID, ti.NetworkMode, ti.SocketDir, ti.Warnings = srv.Image, srv.ImageID, srv.NetworkMode, srv.SocketDir, srv.Warnings
	ti.Endpoints = []drivers.Endpoint{srv.TCP, srv.Unix}
	switch {
	case srv.PID > 0:
		cpus, err := placement.Affinity(srv.PID)
		if err != nil {
			return err
		}
		ti.ServerCPUs = placement.FormatList(cpus)
	case srv.CPUs != "":
		ti.ServerCPUs = srv.CPUs + " (container cpuset)"
	}
	for _, ep := range ti.Endpoints {
		if err := ep.Validate(); err != nil {
			return fmt.Errorf("%s endpoint: %w", target, err)
		}
	}
	info, err := d.Info(ctx, srv.TCP)
	if err != nil {
		return drivers.Explain(err, srv.TCP)
	}
	ti.Server = info
	fmt.Fprintf(log, "dbsock: %s: %s from %s, ready in %s\n", target, info, srv.Origin, time.Since(began).Round(time.Millisecond))
	for _, size := range p.valueSizes() {
		d, _ := Driver(target, p.Drivers, size)
		if err := d.Seed(ctx, srv.Unix); err != nil {
			return drivers.Explain(err, srv.Unix)
		}
		for _, scenario := range p.scenarios() {
			for _, c := range p.concurrency() {
				opt := p.Options
				opt.Scenario, opt.Concurrency = scenario, c
				err := scenarios.Run(ctx, d, srv, info, opt, func(run results.Run) {
					rep.Runs = append(rep.Runs, run)
					if run.Error == "" {
						fmt.Fprintf(log, "dbsock: %s %s round %d %-4s: p50 %s, mean %s, %d ops (%s)\n", target, run.Label(), run.Round, run.Transport,
							time.Duration(run.Latency.P50), time.Duration(run.Latency.Mean).Round(time.Nanosecond), run.N, run.Evidence)
					}
				})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}
