package scenarios

import (
	"math"
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

// Settings are what the user asked of every case's timing loop: how many
// ops, rounds and blocks, what ends a case, what each op does and how it
// chooses rows. They are fixed before a run starts (Validate checks them)
// and never changed by it: what the pipeline decides per case (Case) and
// per server instance (Instance) is passed beside them. They serialise as
// JSON with snake_case names, durations in nanoseconds.
type Settings struct {
	N        int           `json:"n,omitempty"`           // timed ops per path and round, shared by the workers
	Duration time.Duration `json:"duration_ns,omitempty"` // when set, each path's share of a round lasts this long instead of N ops
	Warmup   int           `json:"warmup,omitempty"`      // untimed ops per worker and path first, on the same connection
	Rounds   int           `json:"rounds,omitempty"`      // rounds, each with fresh connections and a fresh warm-up
	// Blocks is how many block pairs a round holds (DefaultBlocks when 0,
	// at most N): a round's timed ops run as that many short blocks per
	// path, the paths interleaved in groups.
	Blocks int `json:"blocks,omitempty"`
	// Seed draws which block of each group goes first, and the rows.
	Seed uint64 `json:"seed,omitempty"`
	// Precision, when above 0, adds rounds after Rounds until the p50
	// speedup's 95% interval has at most this relative half-width, or
	// until MaxDuration has passed since the case began.
	Precision   float64       `json:"precision,omitempty"`
	MaxDuration time.Duration `json:"max_duration_ns,omitempty"`
	// Rate, when set, runs open loop: this many ops/s per path, spread
	// over the workers (PK only); a Case's Rate overrides it.
	Rate float64 `json:"rate,omitempty"`
	// AutoN says N was not given: each case runs DefaultN of its own
	// workers and rate, RateSeconds of it (the package's RateSeconds when
	// 0).
	AutoN       bool `json:"auto_n,omitempty"`
	RateSeconds int  `json:"rate_seconds,omitempty"`
	// OpTimeout is how long one op may be in flight before dbsock closes
	// its connection and fails the run (a paced loop's wait for an op's
	// time does not count); 0 means DefaultOpTimeout.
	OpTimeout time.Duration `json:"op_timeout_ns,omitempty"`
	// Keys says how the ops choose rows (zero: Uniform).
	Keys Keys `json:"keys,omitzero"`
	// Op is what each op does to its row: drivers.OpRead ("" too),
	// drivers.OpUpdate (then each run counts its successful writes), or
	// drivers.OpMixed: each op reads or writes as drawn from Mix, and the
	// reads and the writes are reported as two cases.
	Op  string `json:"op,omitempty"`
	Mix Mix    `json:"mix,omitzero"`
}

// Case is what the pipeline decides for one case of one target: which
// scenario, how many workers, how many rows its ops read, and whether the
// op is the user's own.
type Case struct {
	Scenario    string `json:"scenario,omitempty"`    // PK ("" too) or Connect
	Concurrency int    `json:"concurrency,omitempty"` // workers, each with its own connection (1 when 0)
	// Rows is the keyspace the ops read, ids 1..Rows, drawn by
	// Settings.Keys before each block group (the same ids for each of its
	// blocks); 0 means the one-row lookup (no ids are handed out).
	Rows int `json:"rows,omitempty"`
	// OwnQuery says the op is the user's own (--query): the runs say so.
	OwnQuery bool `json:"own_query,omitempty"`
	// Offered, when set, is the case's offered rate (a --rate sweep): it
	// overrides Settings.Rate.
	Offered float64 `json:"offered,omitempty"`
}

// For is s as case c runs it: c's own rate, and with AutoN, the N of c's
// workers and rate (DefaultN).
func (s Settings) For(c Case) Settings {
	if c.Offered > 0 {
		s.Rate = c.Offered
	}
	if s.AutoN && s.Duration == 0 {
		s.N = defaultN([]int{c.workers()}, s.Rate, s.RateSeconds)
	}
	return s
}

// Instance is what the pipeline hands one measurement of a case on one
// server instance: which instance it is, the CPU meters of both sides,
// and what the whole run shares (its clock and its progress counter).
type Instance struct {
	// Number is which server instance this is (1 first), recorded on the
	// runs.
	Number int
	// ClientCPU and ServerCPU, when set, are read at the edges of every
	// timed block (never inside it), for CPU time and context switches per
	// op on both sides; ServerCPUWhyNot says why ServerCPU is nil.
	ClientCPU, ServerCPU cpustat.Meter
	ServerCPUWhyNot      string
	// HopCPU, when set, is the hop's own processes in front of the server
	// (counted in ServerCPU too), read at the same edges: its share.
	HopCPU cpustat.Meter
	// Epoch is when the report started: blocks record their start as an
	// offset from it (the start of Run when zero).
	Epoch time.Time
	// Progress, when set, counts timed ops done (in steps of 256), for a
	// progress bar that reads it from another goroutine.
	Progress *atomic.Int64
}

// caseRun is one instance of one case as the loop runs it.
type caseRun struct {
	Settings
	Case
	Instance
}

// DefaultBlocks is how many block pairs a round holds by default: with the
// default 3 rounds, 30 pairs per case, enough for a 95% distribution-free
// interval of the median pair ratio to be a few percent wide.
const DefaultBlocks = 10

func (c Case) workers() int { return max(c.Concurrency, 1) }

// Timeout is how long dbsock waits for a server that does not answer:
// OpTimeout, or DefaultOpTimeout.
func (o Settings) Timeout() time.Duration { return o.timeout() }

func (o Settings) timeout() time.Duration {
	if o.OpTimeout <= 0 {
		return DefaultOpTimeout
	}
	return o.OpTimeout
}

// BlocksPerRound is how many block pairs a round holds.
func (o Settings) BlocksPerRound() int { return o.blocks() }

// blocks is how many block pairs a round holds.
func (o Settings) blocks() int {
	b := o.Blocks
	if b <= 0 {
		b = DefaultBlocks
	}
	if o.Duration <= 0 {
		b = min(b, max(o.N, 1))
	}
	return b
}

// blockOps is how many timed ops block j of a round does over all its
// workers: N spread as evenly as the blocks allow (workerOps splits them
// between the workers).
func (o Settings) blockOps(j int) int {
	b := o.blocks()
	n := o.N / b
	if j < o.N%b {
		n++
	}
	return n
}

// workerOps is worker i's share of a block of n ops over w workers: as
// even as the workers allow, the first ones one op more.
func workerOps(n, w, i int) int {
	share := n / w
	if i < n%w {
		share++
	}
	return share
}

// DefaultN is the timed ops per transport and round when none is given:
// 3,000; at least one op per worker in each default block, for the most
// workers among concurrency; and at a rate, RateSeconds of it, so that a
// block lasts about half a second and its p99 rests on the slowest 1% of
// at least rate/20 ops.
func DefaultN(concurrency []int, rate float64) int { return defaultN(concurrency, rate, RateSeconds) }

func defaultN(concurrency []int, rate float64, seconds int) int {
	if seconds <= 0 {
		seconds = RateSeconds
	}
	n := 3000
	for _, w := range concurrency {
		n = max(n, DefaultBlocks*w)
	}
	if rate > 0 {
		n = max(n, int(math.Ceil(rate*float64(seconds))))
	}
	return min(n, MaxN)
}

// RateSeconds is how many seconds of its rate a transport's round runs
// when --n is not given (DefaultN); SweepSeconds, in a sweep of rates or
// a search, where each rate is one point of a curve.
const (
	RateSeconds  = 5
	SweepSeconds = 2
)
