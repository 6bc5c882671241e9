package agents

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Driver is a target's driver whose connections an agent opens and whose
// ops the agent does and times: what it seeds, what the server is and the
// sentence that describes the op are the target driver's own. Open asks
// the agent for a connection and checks it on the server side (through
// the target driver's drivers.ConnFinder, on the same path) before it
// returns it, so that no op of an unverified connection is ever timed.
// Its connections are drivers.BlockTimer: the timing loop hands each a
// block of keys and records the latencies the agent returns.
type Driver struct {
	drivers.Driver
	agent  *Agent
	finder drivers.ConnFinder
	lookup drivers.AgentLookup
	mu     sync.Mutex // one request at a time: the protocol is one answer per request, in order
	opened int
	// counted is what the server checks each block with (audit.go).
	counted string
	// window is the audit of the blocks of its connections that run
	// together (audit.go).
	window window
	// bounds are its paths' recent blocks, which bound the latencies
	// from below (bounds.go).
	bounds bounds
	// shared says that others than this run may use the server: its
	// counts then bound the agent's ops from below only (audit.go).
	shared bool
}

// SharedServer says that the server may serve others than this run (a
// server of the user's): the counts of what it served then bound an
// agent's ops from below only, as others' ops move them too.
func (d *Driver) SharedServer() { d.shared = true }

// NewDriver is d's op done by agent a. d must be a drivers.ConnFinder and
// a drivers.AgentOp: dbsock does not time an agent's connection it cannot
// check on the server side.
func NewDriver(d drivers.Driver, a *Agent) (*Driver, error) {
	f, ok := d.(drivers.ConnFinder)
	if !ok {
		return nil, fmt.Errorf("dbsock cannot find another process's connection on a %s server, so it cannot verify an agent's route there", d.Name())
	}
	op, ok := d.(drivers.AgentOp)
	if !ok {
		return nil, fmt.Errorf("the %s driver does not say its lookup in a form an agent can do", d.Name())
	}
	return &Driver{Driver: d, agent: a, finder: f, lookup: op.AgentOp()}, nil
}

// Agent is the agent that does the driver's ops.
func (d *Driver) Agent() *Agent { return d.agent }

// Timed is d as the timing loop takes it: where the target's driver reads
// the server's own execution statistics (drivers.ExecStatter), d reads
// them the same way, over dbsock's own connection, so that an agent's op
// is split into client, transport and server work as Go's is (the server
// counts the agent's lookups as it counts dbsock's).
func (d *Driver) Timed() drivers.Driver {
	if x, ok := d.Driver.(drivers.ExecStatter); ok {
		return execDriver{Driver: d, x: x}
	}
	return d
}

// execDriver is a Driver whose server reports its own execution time.
type execDriver struct {
	*Driver
	x drivers.ExecStatter
}

// OpenExecStats implements drivers.ExecStatter with the target driver's.
func (e execDriver) OpenExecStats(ctx context.Context, ep drivers.Endpoint) (drivers.ExecReader, string, error) {
	return e.x.OpenExecStats(ctx, ep)
}

// Open implements drivers.Driver: the agent opens a connection on ep,
// which dbsock finds on the server over a connection of its own on the
// same path, carrying the token it gave, on ep's path.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.opened++
	id := string(ep.Transport) + "-" + strconv.Itoa(d.opened)
	f, err := d.finder.OpenFinder(ctx, ep)
	if err != nil {
		return nil, fmt.Errorf("open dbsock's own connection to verify the %s agent's: %w", d.agent.spec.Stack, err)
	}
	// A server that shows no name of a connection (drivers.Anonymous) is
	// sent none: in front of one, a proxy may refuse the command that
	// names it.
	token := Token(id)
	if _, anonymous := f.(drivers.Anonymous); anonymous {
		token = ""
	}
	o, err := NewOpen(id, d.Name(), ep, token, d.lookup.Statement, ep.TLSRoots)
	if err != nil {
		f.Close()
		return nil, err
	}
	o.NoPrepare = d.lookup.NoPrepare
	if h := d.agent.Hello(); h.Protocol >= 2 {
		o.Family = d.lookup.Family
		if err := h.Speaks(o.Family, o.Path); err != nil {
			f.Close()
			return nil, fmt.Errorf("the %s agent cannot open %s over %s: %w", d.agent.spec.Stack, d.Name(), o.Path, err)
		}
	}
	r, v, err := d.agent.OpenVerified(ctx, f, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	// dbsock's own connection stays open with the agent's: each block is
	// audited through it (audit.go).
	d.counted = auditedBy(f)
	c := &conn{d: d, id: id, v: v, valueLen: d.ValueSize(), finder: f,
		claim: drivers.Claim{Token: o.Token, ConnID: r.ConnID.String(), LocalAddr: r.LocalAddr}, path: ep.Transport}
	c.UseKeys(nil)
	return c, nil
}

// conn is one of the agent's connections, verified when it was opened.
type conn struct {
	d        *Driver
	id       string
	v        drivers.Verification
	keys     []any
	valueLen int
	// finder is dbsock's own connection to the server, on the same path,
	// that verified this one; claim identifies this one there.
	finder drivers.Finder
	claim  drivers.Claim
	path   drivers.Transport
	audit  audit
	// scenario is the requests' (agents.ScenarioConnect for the
	// Reconnecting copy of a verified connection).
	scenario string
}

// Reconnecting implements drivers.Reconnector: the connection as the
// connect scenario times it, each op a connection of its own that the
// agent opens with this one's settings; this one stays open, verified.
func (c *conn) Reconnecting() (drivers.BlockTimer, error) {
	if err := c.d.agent.hello.CanConnect(); err != nil {
		return nil, fmt.Errorf("the %s agent: %w", c.d.agent.spec.Stack, err)
	}
	return &conn{d: c.d, id: c.id, v: c.v, keys: c.keys, valueLen: c.valueLen, finder: c.finder, claim: c.claim, path: c.path, scenario: ScenarioConnect}, nil
}

// Verify implements drivers.Conn: what the server said of this very
// connection, over dbsock's own connection, when the agent opened it.
func (c *conn) Verify(context.Context) (drivers.Verification, error) { return c.v, nil }

// UseKeys implements drivers.Keyed: the rows' keys in the form the agent
// is sent (none: the one-row lookup, row 1).
func (c *conn) UseKeys(ids []int64) {
	c.keys = c.keys[:0]
	if len(ids) == 0 {
		c.keys = append(c.keys, c.d.lookup.Key(1))
	}
	for _, id := range ids {
		c.keys = append(c.keys, c.d.lookup.Key(id))
	}
}

// Do implements drivers.Conn: one op on the first key.
func (c *conn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey implements drivers.Keyed: one op, on key i, done by the agent.
func (c *conn) DoKey(ctx context.Context, i int, _ bool) error {
	r, _, err := c.block(ctx, []any{c.keys[i%len(c.keys)]})
	if err != nil {
		return err
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("the %s agent: %s", c.d.agent.spec.Stack, r.Errors[0].Message)
	}
	return nil
}

// TimeBlock implements drivers.BlockTimer: n ops on the handed keys in
// order, in requests of at most MaxOps.
func (c *conn) TimeBlock(ctx context.Context, n int) ([]int64, []drivers.OpFailure, error) {
	ns := make([]int64, 0, n)
	var failed []drivers.OpFailure
	for done := 0; done < n; {
		keys := make([]any, min(n-done, MaxOps))
		for i := range keys {
			keys[i] = c.keys[(done+i)%len(c.keys)]
		}
		r, span, err := c.block(ctx, keys)
		if err != nil {
			return ns, failed, err
		}
		if err := c.bound(r, span); err != nil {
			return ns, failed, err
		}
		ns = append(ns, r.Ns...)
		for _, e := range r.Errors {
			failed = append(failed, drivers.OpFailure{Index: done + e.Index, Message: e.Message})
		}
		c.tally(len(r.Ns), len(r.Errors))
		done += len(keys)
		if endsFailing(r) {
			break // MaxFailedInARow failed ops in a row end a block, as they end dbsock's own loop
		}
	}
	return ns, failed, nil
}

// endsFailing says whether a block's last MaxFailedInARow ops failed.
func endsFailing(r BlockResult) bool {
	return endedByFailures(&ConnResult{Ns: r.Ns, Errors: r.Errors})
}

// block asks the agent for one block on c, and returns its result and
// the agent's span for it on dbsock's clock.
func (c *conn) block(ctx context.Context, keys []any) (BlockResult, time.Duration, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	r, err := c.d.agent.Block(ctx, Block{ID: c.id, Keys: keys, ValueLength: c.valueLen, Scenario: c.scenario})
	return r, c.d.agent.answerSpan(), err
}

// bound weighs a block of c's against the blocks before it (bounds.go),
// and fails the agent when they disagree with what dbsock saw.
func (c *conn) bound(r BlockResult, span time.Duration) error {
	if len(r.Errors) > 0 {
		return nil // a failed op's time says nothing of a lookup's (a server gone: the error comes back at once)
	}
	var sum int64
	for _, v := range r.Ns {
		sum += v
	}
	b := &c.d.bounds
	err := b.block(string(c.path)+c.scenarioSuffix(), sample{ops: len(r.Ns), sum: sum, span: span})
	if err == nil {
		err = b.repeat(c.id+" ("+string(c.path)+")", r.Ns, len(r.Ns)-len(r.Errors))
	}
	if err != nil {
		return c.d.agent.fail(fmt.Errorf("%w: %w", ErrUnseen, err))
	}
	return nil
}

// scenarioSuffix tells c's blocks of the connect scenario from its
// lookups' in the bounds: their ops are of another kind.
func (c *conn) scenarioSuffix() string {
	if c.scenario == "" {
		return ""
	}
	return " (" + c.scenario + ")"
}

// Close implements drivers.Conn: the agent closes the connection, and
// dbsock its own that audited it.
func (c *conn) Close() error {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	err := c.d.agent.CloseConn(context.Background(), c.id)
	if c.finder != nil {
		_ = c.finder.Close()
		c.finder = nil
	}
	return err
}

// TimeGroup implements drivers.GroupTimer: one load request for every
// connection of conns (each this agent's); a plan of more than MaxOps ops
// in all is run as several loads one after another, each from its own
// T0, so that no answer is over its limit. The latencies of each
// connection count towards its audit.
func (c *conn) TimeGroup(ctx context.Context, conns []drivers.BlockTimer, plan drivers.GroupPlan) ([]drivers.GroupResult, error) {
	cs := make([]*conn, len(conns))
	for i, bt := range conns {
		x, ok := bt.(*conn)
		if !ok || x.d != c.d {
			return nil, fmt.Errorf("the %s agent: a load's connections must all be its own", c.d.agent.spec.Stack)
		}
		cs[i] = x
	}
	out := make([]drivers.GroupResult, len(cs))
	chunk := max(MaxOps/len(cs)-plan.Warmup, 1)
	for from, warm := 0, plan.Warmup; ; from, warm = from+chunk, 0 {
		l, more := c.load(cs, plan, from, chunk, warm)
		if len(l.IDs) == 0 {
			return out, nil
		}
		c.d.mu.Lock()
		r, err := c.d.agent.Load(ctx, l)
		span := c.d.agent.answerSpan()
		c.d.mu.Unlock()
		if err != nil {
			return nil, err
		}
		took, err := c.boundLoad(l, r, span)
		if err != nil {
			return nil, err
		}
		for _, cr := range r.Results {
			k := slices.Index(l.IDs, cr.ID)
			o := &out[k]
			for _, e := range cr.Errors {
				o.Failed = append(o.Failed, drivers.OpFailure{Index: len(o.Ns) + e.Index, Message: e.Message})
			}
			o.Ns, o.LagNs = append(o.Ns, cr.Ns...), append(o.LagNs, cr.LagNs...)
			o.ElapsedNs += took.Nanoseconds()
			cs[k].tally(len(cr.Ns), len(cr.Errors))
		}
		if !more {
			return out, nil
		}
	}
}

// load is the load of ops [from, from+chunk) of each connection of cs
// under plan (those that have any), warm first; more says whether ops
// are left after it.
func (c *conn) load(cs []*conn, plan drivers.GroupPlan, from, chunk, warm int) (l Load, more bool) {
	l = Load{Warmup: warm, ValueLength: c.valueLen, IntervalNs: plan.Interval.Nanoseconds(), DurationNs: plan.Duration.Nanoseconds(), Scenario: c.scenario}
	for i, x := range cs {
		n := min(plan.N[i]-from, chunk)
		if n <= 0 {
			continue
		}
		more = more || plan.N[i] > from+chunk
		keys := make([]any, n)
		if plan.Duration > 0 { // the agent walks them round
			keys = keys[:min(n, len(x.keys))]
			l.MaxOps = max(l.MaxOps, n)
		}
		for j := range keys {
			keys[j] = x.keys[(from+j)%len(x.keys)]
		}
		l.IDs, l.Keys = append(l.IDs, x.id), append(l.Keys, keys)
		if plan.Interval > 0 {
			l.OffsetsNs = append(l.OffsetsNs, plan.Offsets[i].Nanoseconds())
		}
	}
	if plan.Duration > 0 {
		more = false // a duration is one load: the plan's N are its most ops
	}
	return l, more
}
