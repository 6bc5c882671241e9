package scenarios

import (
	"sync/atomic"
	"time"

	"github.com/dbsock/dbsock/internal/cpustat"
)

// Scenario names.
const (
	// PK: one connection per worker, kept open; each op is one lookup.
	PK = "pk"
	// Connect: each op opens a connection, does one lookup and closes it.
	Connect = "connect"
)

// Names lists the scenarios.
var Names = []string{PK, Connect}

// Phase names of the connect scenario, and of open-loop mode.
const (
	PhaseConnect     = "connect"
	PhaseQuery       = "query"
	PhaseUncorrected = "uncorrected"
	// The parts of connect, where the driver says when they end: the
	// socket's connect, the TLS handshake (the tls path), and the rest
	// (the protocol's handshake, authentication and set-up).
	PhaseDial  = "dial"
	PhaseTLS   = "tls"
	PhaseLogin = "login"
)

// Options are one case's loop settings.
type Options struct {
	// Rows is the keyspace the ops read, ids 1..Rows, drawn by Keys before
	// each block pair (the same ids for both of its blocks); 0 means the
	// one-row lookup (no ids are handed out).
	Rows int
	// Keys says how the ops choose rows (zero: Uniform).
	Keys Keys
	// Op is what each op does to its row: drivers.OpRead ("" too),
	// drivers.OpUpdate (then each run counts its successful writes), or
	// drivers.OpMixed: each op reads or writes as drawn from Mix, and the
	// reads and the writes are reported as two cases.
	Op  string
	Mix Mix
	// OwnQuery says the op is the user's own (--query): the cases say so.
	OwnQuery    bool
	Scenario    string        // PK or Connect
	N           int           // timed ops per worker, transport and round
	Duration    time.Duration // when set, each transport's share of a round lasts this long instead of N ops
	Warmup      int           // untimed ops per worker and transport first, on the same connection
	Rounds      int           // rounds, each with fresh connections and a fresh warm-up
	Instance    int           // which server instance this is (pipeline.Plan.Instances), recorded on the runs
	Concurrency int           // workers, each with its own connection (1 when 0)
	// Blocks is how many block pairs a round holds (DefaultBlocks when 0,
	// at most N): a round's timed ops run as that many short blocks per
	// transport, TCP and Unix interleaved in pairs.
	Blocks int
	// Seed draws which block of each pair goes first.
	Seed uint64
	// Epoch is when the report started: blocks record their start as an
	// offset from it (the start of Run when zero).
	Epoch time.Time
	// Precision, when above 0, adds rounds after Rounds until the p50
	// speedup's 95% interval has at most this relative half-width, or
	// until MaxDuration has passed since the case began.
	Precision   float64
	MaxDuration time.Duration
	// Rate, when set, runs open loop: this many ops/s per transport, spread
	// over the workers (PK only).
	Rate float64
	// Progress, when set, counts timed ops done (in steps of 256), for a
	// progress bar that reads it from another goroutine.
	Progress *atomic.Int64
	// ClientCPU and ServerCPU, when set, are read at the edges of every
	// timed block (never inside it), for CPU time and context switches per
	// op on both sides; ServerCPUWhyNot says why ServerCPU is nil.
	ClientCPU, ServerCPU cpustat.Meter
	ServerCPUWhyNot      string
	// OpTimeout is how long one op may be in flight before dbsock closes
	// its connection and fails the run (a paced loop's wait for an op's
	// time does not count); 0 means DefaultOpTimeout.
	OpTimeout time.Duration
}

// DefaultBlocks is how many block pairs a round holds by default: with the
// default 3 rounds, 30 pairs per case, enough for a 95% distribution-free
// interval of the median pair ratio to be a few percent wide.
const DefaultBlocks = 10

func (o Options) workers() int { return max(o.Concurrency, 1) }

// Timeout is how long dbsock waits for a server that does not answer:
// OpTimeout, or DefaultOpTimeout.
func (o Options) Timeout() time.Duration { return o.timeout() }

func (o Options) timeout() time.Duration {
	if o.OpTimeout <= 0 {
		return DefaultOpTimeout
	}
	return o.OpTimeout
}

// BlocksPerRound is how many block pairs a round holds.
func (o Options) BlocksPerRound() int { return o.blocks() }

// blocks is how many block pairs a round holds.
func (o Options) blocks() int {
	b := o.Blocks
	if b <= 0 {
		b = DefaultBlocks
	}
	if o.Duration <= 0 {
		b = min(b, max(o.N, 1))
	}
	return b
}

// blockOps is how many timed ops per worker block j of a round does: N
// spread as evenly as the blocks allow.
func (o Options) blockOps(j int) int {
	b := o.blocks()
	n := o.N / b
	if j < o.N%b {
		n++
	}
	return n
}
