package goagent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
)

// ids are the row ids of keys, each checked to be the key the driver's
// lookup names that row by (a string for a key-value target, an integer
// for an SQL one).
func (a *Agent) ids(keys []any) ([]int64, error) {
	ids := make([]int64, len(keys))
	for i, k := range keys {
		var s string
		switch v := k.(type) {
		case string:
			s = v[strings.LastIndexByte(v, ':')+1:]
		case fmt.Stringer: // json.Number
			s = v.String()
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || fmt.Sprint(a.lookup.Key(id)) != fmt.Sprint(k) {
			return nil, fmt.Errorf("key %d (%v) is not a row's key as the %s driver names rows", i, k, a.d.Name())
		}
		ids[i] = id
	}
	return ids, nil
}

// conn returns connection id, checking that a request's value length is
// the one its driver checks each value against.
func (a *Agent) conn(id string, valueLength int) (*conn, error) {
	c, ok := a.conns[id]
	if !ok {
		return nil, fmt.Errorf("no connection %s is open", id)
	}
	if valueLength != a.d.ValueSize() {
		return nil, fmt.Errorf("values of %d bytes were asked for; this agent's %s driver checks for %d: start it with the run's settings", valueLength, a.d.Name(), a.d.ValueSize())
	}
	return c, nil
}

// block runs b: its warm-up ops, then each key's op, timed.
func (a *Agent) block(ctx context.Context, b agents.Block) (agents.BlockResult, error) {
	if len(b.Keys) == 0 || b.Warmup < 0 || len(b.Keys)+b.Warmup > agents.MaxOps {
		return agents.BlockResult{}, fmt.Errorf("block on %s: %d keys and %d warm-up ops; want 1 to %d in all", b.ID, len(b.Keys), b.Warmup, agents.MaxOps)
	}
	c, err := a.conn(b.ID, b.ValueLength)
	if err == nil {
		c.connect, err = connectScenario(b.Scenario)
	}
	if err != nil {
		return agents.BlockResult{}, fmt.Errorf("block on %s: %w", b.ID, err)
	}
	ids, err := a.ids(b.Keys)
	if err != nil {
		return agents.BlockResult{}, fmt.Errorf("block on %s: %w", b.ID, err)
	}
	c.useKeys(ids)
	for i := range b.Warmup {
		if err := c.do(ctx, i); err != nil {
			return agents.BlockResult{}, fmt.Errorf("block on %s: warm-up op %d: %w", b.ID, i, err)
		}
	}
	r := agents.BlockResult{Type: agents.TypeBlockResult, ID: b.ID, Ns: make([]int64, len(ids))}
	for i := range ids {
		start := time.Now()
		err := c.do(ctx, i)
		r.Ns[i] = time.Since(start).Nanoseconds()
		if err != nil {
			r.Errors = append(r.Errors, agents.OpError{Index: i, Message: clip(err.Error(), MaxMessage)})
		}
	}
	return r, nil
}

// useKeys hands the connection the rows its next ops look up.
func (c *conn) useKeys(ids []int64) {
	c.k.UseKeys(ids)
	c.nkeys = max(len(ids), 1) // none: the driver's one row
	c.reopen.ids = ids
}

// do is one op of c's on key i of its keys (starting over at the end),
// watched by its watchdog.
func (c *conn) do(ctx context.Context, i int) error {
	if c.connect {
		return c.reopen.do(ctx, i, c.timeout)
	}
	c.dog.begin()
	err := c.k.DoKey(ctx, i%c.nkeys, false)
	c.dog.end()
	if err != nil && c.dog.fired.Load() {
		return fmt.Errorf("no answer within %s (the op timeout): %w", c.timeout, err)
	}
	return err
}

// overhead times an empty op n times, as block times an op.
func overhead(n int) (agents.OverheadResult, error) {
	if n < 1 || n > agents.MaxOps {
		return agents.OverheadResult{}, fmt.Errorf("overhead of %d empty ops; want 1 to %d", n, agents.MaxOps)
	}
	r := agents.OverheadResult{Type: agents.TypeOverheadResult, Ns: make([]int64, n)}
	for i := range r.Ns {
		start := time.Now()
		r.Ns[i] = time.Since(start).Nanoseconds()
	}
	return r, nil
}

// watchdog aborts a connection whose op has been in flight for its
// timeout (drivers.Aborter, else Close), so that an op on a hung server
// fails instead of hanging the agent.
type watchdog struct {
	since   atomic.Int64 // when the op in flight began (UnixNano), 0: none
	fired   atomic.Bool
	done    chan struct{}
	stopped sync.Once
}

// abortOf is what ends c's op in flight: its Abort (drivers.Aborter),
// whose socket closes under the client library, else its Close.
func abortOf(c drivers.Conn) func() error {
	if a, ok := c.(drivers.Aborter); ok {
		return a.Abort
	}
	return c.Close
}

func newWatchdog(c drivers.Conn, timeout time.Duration) *watchdog {
	w := &watchdog{done: make(chan struct{})}
	if timeout <= 0 {
		return w
	}
	abort := abortOf(c)
	go func() {
		tick := time.NewTicker(max(timeout/8, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case now := <-tick.C:
				if s := w.since.Load(); s != 0 && now.UnixNano()-s >= timeout.Nanoseconds() {
					w.fired.Store(true)
					_ = abort()
					return
				}
			}
		}
	}()
	return w
}

func (w *watchdog) begin() { w.since.Store(time.Now().UnixNano()) }
func (w *watchdog) end()   { w.since.Store(0) }
func (w *watchdog) stop()  { w.stopped.Do(func() { close(w.done) }) }
