package drivers

import (
	"context"
	"errors"
	"time"
)

// A client stack's agent (package agents) does a target's op in another
// process, in its own language: it needs the op as data (AgentOp), and the
// timing loop hands such a connection a whole block of keys at once
// (BlockTimer), since its ops are timed where they are done.

// AgentLookup is a driver's lookup as another process does it: the same
// statement on the same rows, each row's key in the form the agent
// protocol carries (docs/agents.md).
type AgentLookup struct {
	// Statement is the lookup of an SQL target, with its one parameter
	// written as the server's own placeholder ($1 or ?); "" for a
	// key-value target.
	Statement string
	// NoPrepare says that the statement must not be prepared on the
	// server (a pooler in transaction pooling, or a mode that sends it
	// as text each time).
	NoPrepare bool
	// Key is row id's key: a string for a key-value target, the integer
	// id for an SQL one.
	Key func(id int64) any
	// Family is the protocol the server speaks, as the agent protocol
	// names it (a pooler's is its database's).
	Family string
}

// AgentOp is an optional capability of a Driver whose op an agent can do
// as the driver does it: the driver's current workload's lookup.
type AgentOp interface {
	AgentOp() AgentLookup
}

// OpFailure is one failed op of a block timed elsewhere: its index in the
// block and what went wrong.
type OpFailure struct {
	Index   int
	Message string
}

// BlockTimer is an optional capability of a Keyed Conn whose ops are timed
// where they are done, in another process (an agent's connection): the
// timing loop hands it a block's worth of ops at once instead of timing
// each op itself, and records the latencies it returns as it records its
// own.
type BlockTimer interface {
	Keyed
	// TimeBlock does n ops, op i on the key at index i of those handed
	// to UseKeys (starting over at the end), and returns one latency in
	// nanoseconds per op, on the timing process's monotonic clock, and
	// the ops that failed (their latencies are not results). An error
	// is the timer itself failing (its process gone or hung): the block
	// is lost.
	TimeBlock(ctx context.Context, n int) (ns []int64, failed []OpFailure, err error)
}

// GroupTimer is an optional capability of a BlockTimer whose process runs
// many connections at once in its own concurrency model (an agent's
// threads, processes or event loop): the timing loop hands it all of one
// path's connections for a block instead of one block each, so that the
// connections' ops run together, paced where the plan says.
type GroupTimer interface {
	BlockTimer
	// TimeGroup runs plan on conns (this connection among them, each a
	// connection of the same process) and returns one GroupResult per
	// connection, in order. An error is the timer itself failing.
	TimeGroup(ctx context.Context, conns []BlockTimer, plan GroupPlan) ([]GroupResult, error)
}

// GroupPlan is one block of a group of connections: Warmup untimed ops on
// each first, then N[c] ops on connection c (on its handed keys in order,
// starting over at the end), all starting at one moment T0. Closed loop
// when Interval is 0; else op j of connection c is due at T0 + Offsets[c]
// + j*Interval. Under Duration, no op is due (or, closed loop, starts)
// after T0+Duration, and N[c] is the most connection c may do.
type GroupPlan struct {
	Warmup   int
	N        []int
	Interval time.Duration
	Offsets  []time.Duration
	Duration time.Duration
}

// GroupResult is one connection's ops of a group block: the latency of
// each from its start to its end, in nanoseconds; paced, its lag (its
// start minus its due time); the ops that failed; and, where the timer
// bounds it by a clock of its own, the block's time (ElapsedNs: the
// timing loop takes no less for the block than the longest of these).
type GroupResult struct {
	Ns, LagNs []int64
	Failed    []OpFailure
	ElapsedNs int64
}

// An agent's latencies are its own word until dbsock checks them against
// what it sees itself: the block's wall time on its own clock (package
// agents), and, through the Finder it verified the connection with, what
// the server counted while the block ran. The two capabilities below are
// a Finder's where its server keeps such counts.

// ErrDisbelieved is wrapped by a timer's error when what it reported of
// its ops disagrees with what dbsock or the server saw of them (package
// agents: the audit). The timing loop marks the runs it ends
// (results.Failure.Disbelieved), and no figure of their case is shown.
var ErrDisbelieved = errors.New("what the client reported disagrees with what dbsock saw")

// OpCounter is an optional capability of a Finder whose server keeps a
// running count of the lookups an agent's op makes, over all its
// connections: a block of n ops must move it by at least n.
type OpCounter interface {
	// CountOps is the count now.
	CountOps(ctx context.Context) (int64, error)
	// Counter names the count for reports and errors: "INFO
	// commandstats cmdstat_get calls".
	Counter() string
}

// ConnCounter is an optional capability of a Finder whose server keeps a
// running count of the connections it accepted: a block of the connect
// scenario, each op on a connection of its own, must move it by at least
// its ops.
type ConnCounter interface {
	// CountConns is the count now.
	CountConns(ctx context.Context) (int64, error)
	// ConnCounter names the count for reports and errors: "INFO stats
	// total_connections_received".
	ConnCounter() string
}

// Reconnector is an optional capability of a BlockTimer whose process
// times the connect scenario itself (an agent's connection): each op of
// the BlockTimer Reconnecting returns opens a connection of its own with
// this one's settings, does the lookup on it and closes it, timed from
// before the open to the close's end; this connection, verified, stays
// open. An error says why the process cannot.
type Reconnector interface {
	Reconnecting() (BlockTimer, error)
}

// UseChecker is an optional capability of a Finder whose server shows
// when each connection last served an op.
type UseChecker interface {
	// CheckUse returns an error unless the connection claim identifies
	// is still the one verified as v (same route, same peer) and served
	// its last op within the last within, and that op was a lookup.
	CheckUse(ctx context.Context, claim Claim, v Verification, within time.Duration) error
}

// BlockAuditor is an optional capability of a BlockTimer whose ops dbsock
// cannot see: the timing loop calls StartAudit before a block's window
// opens and EndAudit once it closes (outside the window, so that what the
// audit costs the server is not charged to the block), and EndAudit's
// error, naming what disagreed, fails the block.
type BlockAuditor interface {
	StartAudit(ctx context.Context) error
	EndAudit(ctx context.Context) error
}

// NamedOpener is an optional capability of a Driver whose connections can
// carry a token where the server shows it, as an agent's must (the name
// its ConnFinder finds them by): dbsock's own Go agent (dbsock agent)
// opens its connections with it, so that they are checked on the server
// side as every other agent's are.
type NamedOpener interface {
	// OpenNamed is Open, the connection carrying token (a target whose
	// Finder tells a new connection by something else opens it as Open
	// does).
	OpenNamed(ctx context.Context, ep Endpoint, token string) (Conn, error)
}
