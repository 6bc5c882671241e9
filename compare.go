package dbsock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/internal/userop"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// Opener opens your operation over ep: do performs one operation (it is
// what is timed: one query, one command, one call of your own code), and
// close releases what open made (it may be nil). Connect through ep with
// your client's package of clients/ (dbsockpg.Config, dbsockmysql.Config,
// dbsockredis.Options, dbsockmongo.Options, dbsockmemcache.Client), or with
// Dial in a client of your own: Compare checks that your op dialed ep.
type Opener func(ctx context.Context, ep Endpoint) (do func(context.Context) error, close func() error, err error)

// CompareOptions size a comparison. Zero values take dbsock run's defaults,
// given below, so that Compare measures as the command does; NoWarmup asks
// for no warm-up. Compare refuses what dbsock run refuses (a negative N,
// more Blocks than N, an OpTimeout under 10 ms), naming these fields.
type CompareOptions struct {
	// N is the timed ops per transport and round (3,000), shared by the
	// Concurrency workers; Warmup the untimed ops before them on each
	// fresh connection (1,000, or none with NoWarmup).
	N, Warmup int
	// Instances is how many server instances the comparison measures (9),
	// and its interval is over them. A server Start started is restarted
	// between instances, its data kept (see Prepare for a server that
	// keeps none); a server of External cannot be, so its instances are
	// fresh connections to the one process and the report says that the
	// interval covers that process only.
	Instances int
	// Rounds per server instance each open fresh connections (1); Blocks
	// is the block pairs per round, TCP and Unix interleaved (10).
	Rounds, Blocks int
	// Concurrency is how many workers, each with its own open, run at once
	// per transport (1).
	Concurrency int
	// Seed draws which block of each pair goes first (random when 0).
	Seed uint64
	// Placement is where this process runs while it measures: "auto"
	// (the default: pinned as dbsock run pins its client, and put back
	// after), "none", or "same"/"split" (see dbsock run --help).
	Placement string
	// OpTimeout is how long an op may take before the server is given up
	// on (10 s).
	OpTimeout time.Duration
	// Prepare, when set, loads your data over ep: before the first server
	// instance, and again after each restart of a server that keeps no
	// data over one (the in-memory servers, as dbsock starts them). It is
	// called once per endpoint that reaches data of its own: a target
	// whose TCP and Unix endpoints are two processes (a cache that serves
	// a socket only with TCP off) does not read over one what was
	// written over the other.
	Prepare func(ctx context.Context, ep Endpoint) error
}

// NoWarmup, as CompareOptions.Warmup, times every op from the first one on
// each fresh connection.
const NoWarmup = -1

// The defaults of CompareOptions: dbsock run's.
const (
	defaultWarmup    = 1000
	defaultInstances = 9
	defaultRounds    = 1
)

// Compare runs your operation against srv over both of its transports the
// way "dbsock run" runs its own, with its defaults: over server instances
// (the server restarted between them where it can be), each in rounds of
// fresh connections, verified and warmed up, then timed op by op in
// interleaved TCP/Unix block pairs; the speedup is the median over
// instances of each instance's median paired ratio, with a
// distribution-free 95% interval over instances, and the report's verdict
// is filled as dbsock run's is. name names the operation in the report. It
// returns the report even on error, with what was measured.
//
// Measurements on one machine take turns: Compare first takes the
// machine's measuring lock, which dbsock run and dbsocktest.Benchmark of
// every process take too, and while another holds it (another package's
// test binary of the same go test ./..., for instance) it waits, saying on
// stderr which process it waits for, at most 10 minutes; then it gives up
// with an error naming that process. DBSOCK_MEASURE_LOCK names another
// lock file, or, set to off, takes none (docs/library.md).
func Compare(ctx context.Context, srv *Server, name string, open Opener, opt CompareOptions) (*Report, error) {
	if srv == nil || open == nil || name == "" {
		return nil, fmt.Errorf("dbsock.Compare: a server, a name and an Opener are needed")
	}
	if _, taken := targets.Lookup(name); taken {
		return nil, fmt.Errorf("dbsock.Compare: %q names one of dbsock's targets; name your op something else", name)
	}
	place, err := placement.Resolve(orDefault(opt.Placement, "auto"), "", "")
	if err != nil {
		return nil, compareError(err)
	}
	server, _ := targets.Lookup(srv.Target)
	d := userop.New(ctx, name, open, opt.Prepare, srv.driver(server))
	t := &targets.Target{Target: supply.Target{Name: name, Volatile: server.Volatile, SeedEach: server.SeedEach},
		Settings: func() targets.Settings { return userSettings{d} }}
	seed := opt.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	plan := pipeline.Plan{
		Targets:        []*targets.Target{t},
		Settings:       map[string]targets.Settings{name: userSettings{d}},
		Provider:       &supply.Lent{Target: name, Server: srv.srv, Restart: true},
		ProviderName:   srv.srv.Provider,
		Sweep:          pipeline.Sweep{Concurrency: []int{max(opt.Concurrency, 1)}},
		Instances:      orDefaultInt(opt.Instances, defaultInstances),
		InstancesAsked: opt.Instances != 0,
		Loop: scenarios.Settings{N: orDefaultInt(opt.N, scenarios.DefaultN([]int{opt.Concurrency}, 0)), Warmup: warmup(opt.Warmup), Rounds: orDefaultInt(opt.Rounds, defaultRounds),
			Blocks: orDefaultInt(opt.Blocks, scenarios.DefaultBlocks), Seed: seed, OpTimeout: opt.OpTimeout},
		Placement: place,
		Reach:     drivers.Reach,
		Output:    pipeline.Output{Libraries: targets.Libraries(), Name: optionName},
	}
	if opt.Blocks == 0 && plan.Loop.N < plan.Loop.Blocks {
		plan.Loop.Blocks = 0 // the default, at most N
	}
	if err := plan.Validate(); err != nil {
		return nil, compareError(err)
	}
	rep, err := pipeline.Run(ctx, plan)
	words.Fill(rep)      // its verdicts in the words dbsock run's report gives them
	rep.Word(optionName) // its warnings and errors name CompareOptions' fields
	return rep, setting.Reword(err, optionName)
}

// options names the engine's settings as the library's options that set
// them (CompareOptions' and StartOptions' fields), and those a comparison
// has no option for as what they are in it: the engine's errors name
// fields of its plan (Plan.Loop.N), the library words them once, here.
var options = map[setting.Field]string{
	setting.N: "CompareOptions.N", setting.Warmup: "CompareOptions.Warmup", setting.Rounds: "CompareOptions.Rounds",
	setting.Blocks: "CompareOptions.Blocks", setting.Concurrency: "CompareOptions.Concurrency", setting.Seed: "CompareOptions.Seed",
	setting.OpTimeout: "CompareOptions.OpTimeout", setting.Placement: "CompareOptions.Placement", setting.Instances: "CompareOptions.Instances",
	setting.Provider: "StartOptions.Provider",
	// A comparison's op is your own, one at a time per worker.
	setting.Pipelines: "the pipeline depth", setting.ValueSizes: "the value size",
}

// optionName words a setting as the library's option that sets it.
func optionName(f setting.Field) string { return options[f] }

// compareError is an invalid comparison, its settings named as
// CompareOptions' fields.
func compareError(err error) error {
	return setting.Reword(setting.Err("dbsock.Compare: %w", err), optionName)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// warmup is CompareOptions.Warmup as the engine reads it: 0 is the
// default, NoWarmup none.
func warmup(v int) int {
	switch v {
	case 0:
		return defaultWarmup
	case NoWarmup:
		return 0
	}
	return v
}

// orDefaultInt is v, or def when v is 0 (a negative v is kept, and
// refused).
func orDefaultInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// driver is the server's own driver, t's, with the settings it was started
// with (StartOptions.Settings) or t's defaults.
func (s *Server) driver(t *targets.Target) drivers.Driver {
	settings := s.settings
	if settings == nil {
		settings = t.Settings()
	}
	return settings.Driver(drivers.Workload{})
}

// userSettings hands the pipeline the caller's op as a target's driver; it
// has no settings of its own (as JSON, {}).
type userSettings struct{ d *userop.Driver }

func (userSettings) Validate() error                          { return nil }
func (s userSettings) Driver(drivers.Workload) drivers.Driver { return s.d }
func (userSettings) External() (supply.Pair, error)           { return supply.Pair{}, nil }
