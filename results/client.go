package results

// Client is the client stack that did a case's ops: its language, its
// runtime and the client library, as the stack's agent said in its hello
// (for Go: the Go release and the driver module dbsock was built with).
type Client struct {
	Language       string `json:"language"`
	RuntimeVersion string `json:"runtime_version"`
	Library        string `json:"library"`
	LibraryVersion string `json:"library_version"`
	// TimingOverheadNs is the agent's own cost of timing an op: the p50
	// of empty ops timed as it times an op, in nanoseconds (0: not
	// measured, as for Go, whose loop's cost dbsock's benchmarks give).
	TimingOverheadNs int64 `json:"timing_overhead_ns,omitempty"`
	// Audit is what the server checked each of an agent's blocks with
	// (its own count of the lookups, its record of each connection's last
	// op); "" for an agent's case when the server keeps neither: its
	// latencies are then the agent's own word, checked only against
	// dbsock's clock. Go's ops are timed in dbsock's own loop.
	Audit string `json:"audit,omitempty"`
	// TimingGoalNs, where its stack declares one, is the most the agent's
	// own timing cost may be (beside MaxOverheadShare); FloorReference,
	// that the stack's floor case is the kernel floor --explain
	// subtracts (agents/NAME/stack.json).
	TimingGoalNs   int64 `json:"timing_goal_ns,omitempty"`
	FloorReference bool  `json:"floor_reference,omitempty"`
	// Workers, at load, is the concurrency model the stack ran the
	// case's connections in: "threads" (a thread per connection),
	// "processes" (a process per connection, as gunicorn's sync workers
	// and PHP-FPM), "event-loop" (one event loop, N connections),
	// "goroutines" (Go's: a goroutine per connection).
	Workers string `json:"workers,omitempty"`
	// FreshProcess says that each server instance's client was a
	// process of its own, started for it (an agent's: every stack's, and
	// Go's as dbsock's agent), so that the interval over instances covers
	// the client process's variation; false for Go's client in dbsock's
	// own process, one process for the whole run.
	FreshProcess bool `json:"fresh_process,omitempty"`
}

// SkippedClient is a client stack a target was not measured from, and why
// (no client library for it in that stack, or the stack not installed).
type SkippedClient struct {
	Stack  string `json:"stack"`
	Reason string `json:"reason"`
}

// MaxOverheadShare is the goal of every agent's own timing cost: at most
// this share of its case's Unix p50 (a stack may declare a goal of its
// own beside it: Client.TimingGoalNs).
const MaxOverheadShare = 0.01

// OverheadOverGoal says whether the agent's timing cost misses its goal
// against its case's Unix p50 (ns); false when either is unknown.
func (c *Client) OverheadOverGoal(unixP50 int64) bool {
	if c == nil || c.TimingOverheadNs <= 0 || unixP50 <= 0 {
		return false
	}
	return float64(c.TimingOverheadNs) > MaxOverheadShare*float64(unixP50) || (c.TimingGoalNs > 0 && c.TimingOverheadNs > c.TimingGoalNs)
}
