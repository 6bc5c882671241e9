package pipeline

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// Plan is one invocation: which targets, from which provider, which cases,
// how much, what to check and how to render. It holds what the user asked
// for; what Run decides per target, case and server instance is passed
// down beside it, never written into it.
type Plan struct {
	// Targets are the registry's targets to measure, in order.
	Targets []*targets.Target
	// Settings are each target's settings (a target without an entry runs
	// with its defaults, Target.Settings).
	Settings     map[string]targets.Settings
	Provider     supply.Provider
	ProviderName string // as the user gave it, e.g. "auto"
	// Reach, when set, is tried on an endpoint before a driver asks the
	// server anything there (dbsock uses drivers.Reach, a plain dial), so
	// that nothing listening is said at once.
	Reach func(context.Context, drivers.Endpoint) error
	// Sweep spans the cases every target runs.
	Sweep Sweep
	// Paths are the routes to each server that every case measures, in
	// the order the report lists them (nil: tcp and unix);
	// each further path is compared with the Baseline as Unix is. A server
	// without one of them (no tcp6 where a server listens on one address)
	// is measured on the others, and the report says why.
	Paths []drivers.Transport
	// Baseline is the path every other one is compared with ("": TCP on
	// 127.0.0.1); it must be one of Paths.
	Baseline drivers.Transport
	// SLO, when set, is the latency objective within which each path's
	// highest rate is found over Sweep.Rates, or by a search (RateAuto).
	SLO *results.SLO
	// RateAuto searches each case's rates (searchRates) instead of
	// measuring Sweep.Rates.
	RateAuto bool
	// Loop is what the user asked of every case's timing loop: how many
	// ops, rounds and blocks, what ends a case, what each op does. Run
	// passes it down as it is; what it decides per case and per server
	// instance (scenarios.Case, scenarios.Instance) goes beside it.
	Loop scenarios.Settings
	// Workload is what the ops read: dbsock's rows, or the user's own op
	// and keys.
	Workload Workload
	// Instances is how many server instances each case measures: between
	// them the server is restarted (same endpoints, same data), and the
	// interval is computed over instances (results.InstanceSpeedup). A
	// server dbsock cannot restart (one it did not start) gets each
	// instance as fresh connections to its one process, and the report
	// says that the interval covers that process only. InstancesAsked
	// says the user gave Instances: Loop.Precision then refuses more than
	// one, and they are measured as given; not given, Instances is a
	// default that the run raises to as many as its comparisons need for
	// Holm's adjustment to let a verdict name a winner (InstancesPerCase).
	Instances      int
	InstancesAsked bool
	// Placement pins the client (here) and names the servers' CPUs (the
	// provider pins those when it starts them).
	Placement placement.Placement
	// Placements, when it holds more than one, are the placements each
	// case is measured under (--placement shared,split): a case of its
	// own under each, the placements taking turns on every server
	// instance (placements.go). Placement is then the first of them.
	Placements []placement.Placement
	// PlacementsAuto says --placement auto chose Placements: a server
	// whose processes dbsock cannot pin is then measured as the
	// scheduler places it, with a warning, where a list the user gave
	// ends the run.
	PlacementsAuto bool
	// Client is the client side: the stacks each target is measured
	// from, and where the timing loop runs.
	Client ClientSide
	// Gates fail the run after it: thresholds and the error rate.
	Gates Gates
	// FailFast stops at the first target that fails; otherwise the others
	// still run.
	FailFast bool
	// Explain says the run holds the decomposition's layers (targets
	// whose Layer is set) to split each target's lookup into: they take
	// one lookup of each target's own value, so no Sweep.Pipelines or
	// Sweep.ValueSizes.
	Explain bool
	// Output is where the run's words and report go.
	Output Output
}

// Sweep spans the cases: every target runs every combination of its
// lists. Empty lists mean PK, 1 worker, the target's own value, one
// lookup per op.
type Sweep struct {
	Scenarios   []string
	Concurrency []int
	ValueSizes  []int
	// Pipelines lists batch depths (lookups per op, in one round trip) for
	// targets whose driver is a drivers.Pipeliner; empty means 1.
	Pipelines []int
	// Rates lists offered rates (ops/s per path), each a case of its own;
	// empty means Loop.Rate alone.
	Rates []float64
}

// Workload is what the ops read and may write (what each op does, and
// how it chooses rows, is the loop's: Plan.Loop's Op, Mix and Keys).
type Workload struct {
	// Rows is how many rows dbsock seeds and the ops read, ids 1..Rows (0:
	// the one-row lookup); a target whose server reads many too slowly,
	// or given fewer keys of the user's own, gets fewer.
	Rows int
	// Queries are the user's own ops by target (--query), KeysFrom their
	// own keys (--keys-from): a target with keys of its own gets no table.
	Queries  map[string]string
	KeysFrom map[string]KeySource
	// AllowWrites lets a Loop.Op that writes write to servers the user
	// runs (external endpoints given); without it Validate refuses.
	AllowWrites bool
}

// ClientSide is where the timing loop runs and which client stacks each
// target is measured from.
type ClientSide struct {
	// Stacks are the client stacks each target is measured from (nil:
	// Go's drivers in dbsock alone): "go", or a stack whose agent dbsock
	// carries (c, python, node, php, ruby, java; ClientStacks), with ":LIBRARY" to
	// choose one of its libraries (python:psycopg). Each (target, stack)
	// is a case of its own; a stack without a library for a target, or
	// not installed here, is skipped and the report says why.
	Stacks []string
	// AgentsDir is the agents' directory (agents.Dir when "").
	AgentsDir string
	// Remote, when set, runs the timing loop outside this process: one
	// Remote per target (dbsock run --client container), which builds the
	// same driver from the target's Settings, carried in each Case.
	Remote StartRemote
	// Place names where Remote runs the loop, for the report (dbsock's
	// "container"); without a Remote it is "host".
	Place string
	// GoAgent, when set, is a dbsock executable whose "agent" command
	// runs the Go stack's client on this host in a process of its own,
	// started afresh for each server instance, so that the interval
	// covers the client process's variation as it covers the server's
	// (dbsock run's default; process.go). "" keeps Go's client in this
	// process (the library's, and dbsock run --client inprocess), as does a
	// run that asks what only the in-process loop does.
	GoAgent string
}

// Gates are what fails a run once it is measured.
type Gates struct {
	// Thresholds are checked against the summary after the run.
	Thresholds []results.Threshold
	// MaxErrorRate is the share of failed ops above which a case fails the
	// run (0: any failed op does; below 0: never).
	MaxErrorRate float64
}

// Output is where a run's words go while it runs and its report after.
type Output struct {
	// Render writes the finished report (nil: nothing is written).
	Render func(*results.Report) error
	// Log receives one line per step (server ready, run done); nil discards.
	Log io.Writer
	// Name words the settings that Log's lines name, for its reader
	// (dbsock run: its flags); nil leaves the engine's names
	// (setting.Field). The report is worded by its reader after the run
	// (results.Report.Word).
	Name setting.Namer
	// Progress, when set, counts the timed ops done, for a progress bar
	// that reads it from another goroutine.
	Progress *atomic.Int64
	// Libraries are the client libraries whose versions the report names.
	Libraries []string
	// Host labels this machine in the report (its hostname when "").
	Host string
}
