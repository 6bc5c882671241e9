package agents

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// An agent's latencies are its own word. dbsock believes a block of them
// only once it agrees with what dbsock sees itself:
//
//   - the block's wall time on dbsock's clock: the latencies cannot add
//     up to more, and none is shorter than MinRoundTrip (Agent.Block);
//   - the server's own count of the lookups it served while the block
//     ran, where it keeps one (drivers.OpCounter): it must have moved by
//     at least the ops the agent says succeeded;
//   - the server's record of the connection itself, where it shows one
//     (drivers.UseChecker): still the one verified at open, on the same
//     route and peer, and its last op a lookup within the block.
//
// A block that fails a check fails its case with what disagreed; a server
// that keeps no count leaves the latencies the agent's own word, which
// the report says (Driver.Counted).

// auditSlack is what the server's record of a connection's last op may
// lag dbsock's clock by: the server's clock reads seconds on some
// servers (CheckUse rounds up), and the audit's own round trips.
const auditSlack = 50 * time.Millisecond

// audit is one connection's audit of the block in progress.
type audit struct {
	started bool
	start   time.Time
	count   int64 // the server's count at the start
	claimed int64 // ops the agent says succeeded since the start
}

// StartAudit implements drivers.BlockAuditor: it reads the server's count
// before the block's window opens (once for all the connections of the
// agent's driver whose blocks run together: its count is the server's).
func (c *conn) StartAudit(ctx context.Context) error {
	c.audit = audit{started: true, start: time.Now()}
	w := &c.d.window
	if w.open == 0 {
		*w = window{counts: c.counts()}
		for i := range w.counts {
			n, err := w.counts[i].read(ctx)
			if err != nil {
				return fmt.Errorf("read %s, which checks the %s agent's block on %s: %w", w.counts[i].name, c.d.agent.spec.Stack, c.path, err)
			}
			w.counts[i].before = n
		}
	}
	w.open++
	w.conns++
	return nil
}

// window is the audit of the blocks of a driver's connections that run
// together (one path's, at load): the server's count before them, how
// many connections they ran on, and what the agent says of them (the
// ops it says succeeded, and those it says it did, counted as its
// answers come), checked against the server's count at the first of
// their ends.
type window struct {
	open, conns       int
	claimed, returned int64
	counts            []count
	checked           bool
}

// count is one of the server's running counts a window is checked by:
// its name, what the agent's ops moved ("lookups"), how to read it, its
// value before the window, and how far the window's ops may move it.
type count struct {
	name, what string
	read       func(context.Context) (int64, error)
	before     int64
	bound      func(w *window) (least, most int64)
	// over says why the count moved by more than its most.
	over string
}

// countSlack is how far a count may move beyond the ops an agent says
// it did on a server only the run uses: dbsock's own statements inside
// the window (the server's execution statistics, read at its edges).
const countSlack = 8

// unbounded is a count's most when nothing bounds it from above.
const unbounded = int64(1) << 62

// counts are the server's counts c's blocks are checked by, where the
// server keeps them: the lookups it served (drivers.OpCounter): at least
// the ops the agent says succeeded, and on a server only the run uses,
// at most those it says it did; the connections it accepted
// (drivers.ConnCounter): in the connect scenario at least an op's each,
// and in the lookup scenarios, on a server only the run uses, none (a
// lookup's op is done on its verified connection, not on one of its
// own).
func (c *conn) counts() []count {
	var cs []count
	shared := c.d.shared
	most := func(n int64) int64 {
		if shared {
			return unbounded
		}
		return n + countSlack
	}
	if oc, ok := c.finder.(drivers.OpCounter); ok {
		cs = append(cs, count{name: oc.Counter(), what: "lookups", read: oc.CountOps,
			bound: func(w *window) (int64, int64) { return w.claimed, most(w.returned) },
			over:  "it did more lookups than it reported"})
	}
	if cc, ok := c.finder.(drivers.ConnCounter); ok {
		if c.scenario == ScenarioConnect {
			cs = append(cs, count{name: cc.ConnCounter(), what: "lookups on connections of their own", read: cc.CountConns,
				bound: func(w *window) (int64, int64) { return w.claimed, most(w.returned) },
				over:  "it opened more connections than it reported ops"})
		} else if !shared {
			cs = append(cs, count{name: cc.ConnCounter(), what: "lookups on their verified connections", read: cc.CountConns,
				bound: func(*window) (int64, int64) { return 0, most(0) },
				over:  "a lookup is done on the connection dbsock verified, not on one of its own"})
		}
	}
	return cs
}

// settle is how long a count that has not yet moved by the ops the
// agent says succeeded is read again (every settleEvery): some servers
// count an op once its session has reported it (PostgreSQL's sessions,
// at the backend's next idle moment or its exit).
const (
	settle      = time.Second
	settleEvery = 50 * time.Millisecond
)

// check reads k at the end of window w and says what is wrong with
// what it moved by.
func (k count) check(ctx context.Context, w *window, on string) error {
	least, most := k.bound(w)
	deadline := time.Now().Add(settle)
	for {
		n, err := k.read(ctx)
		if err != nil {
			return fmt.Errorf("read %s: %w", k.name, err)
		}
		moved := n - k.before
		switch {
		case moved > most:
			return fmt.Errorf("%w: it reported %d ops on %s, but the server's %s moved by %d while the block ran, on a server only this run uses: %s",
				ErrUnseen, w.returned, on, k.name, moved, k.over)
		case moved >= least:
			return nil
		case time.Now().After(deadline) || ctx.Err() != nil:
			return fmt.Errorf("%w: it reported %d %s on %s, but the server's %s moved by %d while the block ran",
				ErrUnseen, least, k.what, on, k.name, moved)
		}
		time.Sleep(settleEvery)
	}
}

// EndAudit implements drivers.BlockAuditor: it checks the ops of the
// blocks that ran together against the server's counts (at the first of
// their ends), and this connection's block against the server's record
// of the connection.
func (c *conn) EndAudit(ctx context.Context) error {
	if !c.audit.started {
		return nil
	}
	a := c.audit
	c.audit = audit{}
	w := &c.d.window
	if w.open > 0 {
		w.open--
	}
	for i := 0; i < len(w.counts) && !w.checked; i++ {
		if err := w.counts[i].check(ctx, w, c.onWhat(w.conns)); err != nil {
			if !errors.Is(err, ErrUnseen) {
				return fmt.Errorf("the %s agent's block on %s: %w", c.d.agent.spec.Stack, c.path, err)
			}
			return c.d.agent.fail(err)
		}
	}
	w.checked = true
	// The connect scenario's ops ran on connections of their own, not on
	// the verified one, whose record says nothing of them.
	if uc, ok := c.finder.(drivers.UseChecker); ok && a.claimed > 0 && c.scenario != ScenarioConnect {
		if err := checkUse(ctx, uc, c.claim, c.v, a.start); err != nil {
			return c.d.agent.fail(fmt.Errorf("%w: its %s connection %s (token %s) after a block of %d lookups: %v",
				ErrUnseen, c.path, c.id, c.claim.Token, a.claimed, err))
		}
	}
	return nil
}

// checkUse asks uc whether the connection served its last op since the
// audit's start. The server reads its record when the question reaches
// it, which a busy machine may delay well past the moment dbsock asked
// (a processlist read 150 ms later than the block's end, on a machine
// with a load of 20): a record that looks too old is asked for again,
// with the first question's own time added to the allowance.
func checkUse(ctx context.Context, uc drivers.UseChecker, claim drivers.Claim, v drivers.Verification, start time.Time) error {
	asked := time.Now()
	err := uc.CheckUse(ctx, claim, v, time.Since(start)+auditSlack)
	if err == nil {
		return nil
	}
	took := time.Since(asked)
	return uc.CheckUse(ctx, claim, v, time.Since(start)+auditSlack+took)
}

// tally counts the ops the agent says it did on c, of which failed
// failed, towards its audit and its window's.
func (c *conn) tally(ops, failed int) {
	c.audit.claimed += int64(ops - failed)
	c.d.window.claimed += int64(ops - failed)
	c.d.window.returned += int64(ops)
}

// onWhat names the connections a window's blocks ran on: this one, or
// n of the path's.
func (c *conn) onWhat(n int) string {
	if n <= 1 {
		return fmt.Sprintf("its %s connection %s", c.path, c.id)
	}
	return fmt.Sprintf("its %d %s connections", n, c.path)
}

// ErrUnseen is wrapped when what an agent reports of a block disagrees
// with what dbsock or the server saw of it; it is a
// drivers.ErrDisbelieved.
var ErrUnseen error = unseen{}

type unseen struct{}

func (unseen) Error() string { return "the server did not see what the agent reported" }

// Is makes ErrUnseen a drivers.ErrDisbelieved.
func (unseen) Is(target error) bool { return target == drivers.ErrDisbelieved }

// Counted says what the server counts each block's ops with, the
// connection's record it checks, or "" when neither: the latencies are
// then the agent's own word, checked only against dbsock's clock.
func (d *Driver) Counted() string {
	return d.counted
}

// auditedBy says what f checks an agent's blocks with.
func auditedBy(f drivers.Finder) string {
	oc, counts := f.(drivers.OpCounter)
	_, uses := f.(drivers.UseChecker)
	switch {
	case counts && uses:
		return "the server's " + oc.Counter() + " and its record of each connection"
	case counts:
		return "the server's " + oc.Counter()
	case uses:
		return "the server's record of each connection's last op"
	}
	return ""
}
