package results

import "github.com/dbsock/dbsock/drivers"

// Config is what the user asked for.
type Config struct {
	N      int `json:"n"`
	Warmup int `json:"warmup"`
	Rounds int `json:"rounds"`
	// Instances is how many times each server was started (restarted
	// between instances); 0 in reports from before --instances.
	Instances int    `json:"instances,omitempty"`
	Provider  string `json:"provider"`
	// Client is where the client ran: "host" ("" in older reports) or
	// "container" (--client container).
	Client string `json:"client,omitempty"`
	// Clients are the client stacks each target was measured from, when
	// the run asked for others than Go's (run --clients).
	Clients []string `json:"clients,omitempty"`
	// Scenario lists the scenarios, comma-separated.
	Scenario string `json:"scenario"`
	// DurationNs, when set, replaced N: each run lasted this long.
	DurationNs int64 `json:"duration_ns,omitempty"`
	Sweep
	// Placement is where the client ran, read back from the OS.
	Placement Placement `json:"placement"`
	// Placements are the placements each case was measured under, when
	// the run had more than one (each run's Case.Placement names its
	// mode); Placement is then the first.
	Placements []Placement `json:"placements,omitempty"`
	// Pipelines lists the batch depths swept (--pipeline).
	Pipelines []int `json:"pipelines,omitempty"`
	// Blocks is how many block pairs each round holds: the timed ops of a
	// round run as that many short TCP blocks and as many Unix blocks,
	// interleaved in pairs.
	Blocks int `json:"blocks,omitempty"`
	Routes
	// Seed drew which block of each pair runs first; --seed repeats it.
	Seed uint64 `json:"seed,omitempty"`
	Goal
	// Workload is what the ops read (nil in reports of older dbsock, which
	// read one row).
	Workload *Workload `json:"workload,omitempty"`
}

// Sweep is the points of a sweep asked for: each concurrency, value size
// and rate is a case of its own (JSON holds them as the Config's).
type Sweep struct {
	// Concurrency, ValueSizes and Rate list the sweep, as asked.
	Concurrency []int   `json:"concurrency,omitempty"`
	ValueSizes  []int   `json:"value_sizes,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	// Rates lists a --rate sweep's offered rates, each a case of its own.
	Rates []float64 `json:"rates,omitempty"`
	// SLO is the latency objective each path's highest rate is found
	// within (Report.Objectives); nil without one.
	SLO *SLO `json:"slo,omitempty"`
	// RateAuto says the rates were found by a bounded search (--rate auto)
	// rather than listed.
	RateAuto bool `json:"rate_auto,omitempty"`
}

// Routes are the paths a run measured and the one each other path was
// compared with (JSON holds them as the Config's).
type Routes struct {
	// Paths lists the routes asked for, in order, when there were more
	// than TCP and Unix (absent for those two); a server that does not
	// serve one leaves it out of its cases (Summary.Sides, and the
	// target's path_not_measured warning, say which were measured).
	Paths []drivers.Transport `json:"paths,omitempty"`
	// Baseline is the path every other one was compared with (--baseline);
	// absent for TCP, the default.
	Baseline drivers.Transport `json:"baseline,omitempty"`
}

// Goal is when a case stopped adding rounds, when it did not run a fixed
// number of them (JSON holds it as the Config's).
type Goal struct {
	// Precision, when set, kept adding rounds until the p50 speedup's 95%
	// interval was within this relative half-width (0.03 for 3%), or until
	// MaxDurationNs had passed for the case.
	Precision     float64 `json:"precision,omitempty"`
	MaxDurationNs int64   `json:"max_duration_ns,omitempty"`
}

// Workload is what the ops of the report's database targets read: how many
// rows were seeded and how the ops chose among them.
type Workload struct {
	// Rows is how many rows (keys) were seeded, ids 1..Rows.
	Rows int `json:"rows"`
	// Keys is the key distribution: uniform, zipf, sequential or hotspot.
	Keys string `json:"keys"`
	// Theta is zipf's constant; HotRows and HotOps are hotspot's shares of
	// the rows and of the ops.
	Theta   float64 `json:"theta,omitempty"`
	HotRows float64 `json:"hot_rows,omitempty"`
	HotOps  float64 `json:"hot_ops,omitempty"`
	// Op is what each op does: read, update or mixed; Mix is mixed's R/W.
	Op  string `json:"op"`
	Mix string `json:"mix,omitempty"`
	// Query is the user's own op by target (--query); KeysFrom where a
	// target's keys came from (--keys-from): then Rows is how many keys.
	Query    map[string]string `json:"query,omitempty"`
	KeysFrom map[string]string `json:"keys_from,omitempty"`
}

// Placement records the CPU placement in effect. CPU lists are as the OS
// reported them after pinning (e.g. "0" or "0,1").
type Placement struct {
	// Mode is none (not pinned), same, split or custom.
	Mode string `json:"mode"`
	// ClientCPUs are the CPUs the client's threads may run on.
	ClientCPUs string `json:"client_cpus"`
	// ServerCPUs are the CPUs requested for servers ("" when not pinned).
	ServerCPUs string `json:"server_cpus,omitempty"`
	// Reason says why this placement was chosen (--placement auto).
	Reason string `json:"reason,omitempty"`
}
