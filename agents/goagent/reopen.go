package goagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
)

// reopen is what a connection's connect-scenario ops open their own
// connections with: its driver and endpoint (no token: they open
// unnamed, as an application's do and as the in-process loop's), and the
// rows they look up.
type reopen struct {
	d   drivers.Driver
	ep  drivers.Endpoint
	ids []int64
}

// connectScenario says whether a request's scenario is the connect
// scenario ("" is lookups on the connection).
func connectScenario(s string) (bool, error) {
	switch s {
	case "":
		return false, nil
	case agents.ScenarioConnect:
		return true, nil
	}
	return false, fmt.Errorf("scenario %q: this agent times %q and lookups on open connections", s, agents.ScenarioConnect)
}

// do is the connect scenario's op i: a connection of its own, opened
// with r's settings within timeout, the lookup of row i on it (starting
// over at the end of the rows), and its close, as dbsock's in-process
// loop times it.
func (r reopen) do(ctx context.Context, i int, timeout time.Duration) (err error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c, err := r.d.Open(ctx, r.ep)
	if err != nil {
		return fmt.Errorf("open over %s: %w", r.ep, timedOut(ctx, timeout, err))
	}
	// The lookup too ends by the op timeout: its connection is aborted
	// then, as the watchdog aborts an open connection's op.
	abort := abortOf(c)
	stop := context.AfterFunc(ctx, func() { _ = abort() })
	defer func() {
		stop()
		err = errors.Join(timedOut(ctx, timeout, err), c.Close())
	}()
	k, ok := c.(drivers.Keyed)
	if !ok {
		return errors.New("the driver's connection does not look up a key it is given")
	}
	if len(r.ids) > 0 {
		j := i % len(r.ids)
		k.UseKeys(r.ids[j : j+1])
	}
	return k.DoKey(ctx, 0, false)
}

// timedOut says that err came of the op timeout when ctx's ran out.
func timedOut(ctx context.Context, timeout time.Duration, err error) error {
	if err != nil && timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s (the op timeout): %w", timeout, err)
	}
	return err
}
