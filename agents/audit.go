package agents

import (
	"context"
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
// before the block's window opens.
func (c *conn) StartAudit(ctx context.Context) error {
	c.audit = audit{started: true, start: time.Now()}
	if oc, ok := c.finder.(drivers.OpCounter); ok {
		n, err := oc.CountOps(ctx)
		if err != nil {
			return fmt.Errorf("read %s, which checks the %s agent's block on %s: %w", oc.Counter(), c.d.agent.spec.Stack, c.path, err)
		}
		c.audit.count = n
	}
	return nil
}

// EndAudit implements drivers.BlockAuditor: it checks the block the agent
// reported against the server's count and its record of the connection.
func (c *conn) EndAudit(ctx context.Context) error {
	if !c.audit.started {
		return nil
	}
	a := c.audit
	c.audit = audit{}
	if oc, ok := c.finder.(drivers.OpCounter); ok {
		n, err := oc.CountOps(ctx)
		if err != nil {
			return fmt.Errorf("read %s, which checks the %s agent's block on %s: %w", oc.Counter(), c.d.agent.spec.Stack, c.path, err)
		}
		if served := n - a.count; served < a.claimed {
			return c.d.agent.fail(fmt.Errorf("%w: it reported %d lookups on its %s connection %s, but the server's %s moved by %d while the block ran",
				ErrUnseen, a.claimed, c.path, c.id, oc.Counter(), served))
		}
	}
	if uc, ok := c.finder.(drivers.UseChecker); ok && a.claimed > 0 {
		if err := uc.CheckUse(ctx, c.claim, c.v, time.Since(a.start)+auditSlack); err != nil {
			return c.d.agent.fail(fmt.Errorf("%w: its %s connection %s (token %s) after a block of %d lookups: %v",
				ErrUnseen, c.path, c.id, c.claim.Token, a.claimed, err))
		}
	}
	return nil
}

// ErrUnseen is wrapped when what an agent reports of a block disagrees
// with what dbsock or the server saw of it.
var ErrUnseen = fmt.Errorf("the server did not see what the agent reported")

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
