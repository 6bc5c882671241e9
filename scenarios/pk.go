package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/results"
)

// PK is the name of the primary-key lookup scenario.
const PK = "pk"

// Options are the loop sizes of a scenario.
type Options struct {
	N      int // timed ops per transport per round
	Warmup int // untimed ops before them, on the same connection
	Rounds int // rounds; odd rounds run TCP first, even rounds Unix first
	// Progress, when set, counts timed ops done (in steps of 256), for a
	// progress bar that reads it from another goroutine.
	Progress *atomic.Int64
	// OpTimeout is how long a connection may go without finishing an op
	// (16 ops, strictly) before dbsock closes it and fails the run; 0 means
	// DefaultOpTimeout.
	OpTimeout time.Duration
}

// Order returns the transports of round (1-based) in the order they run:
// alternating so that drift over time does not favour one side.
func Order(round int) [2]drivers.Transport {
	if round%2 == 0 {
		return [2]drivers.Transport{drivers.Unix, drivers.TCP}
	}
	return [2]drivers.Transport{drivers.TCP, drivers.Unix}
}

// RunPK runs the primary-key lookup scenario against srv: for every round
// and transport one fresh connection, verified server-side, warmed up and
// timed. emit receives each Run as soon as it is done, including a failed or
// interrupted one (Incomplete). RunPK stops at the first failure.
func RunPK(ctx context.Context, d drivers.Driver, srv *compose.Server, server drivers.ServerInfo, opt Options, emit func(results.Run)) error {
	for round := 1; round <= opt.Rounds; round++ {
		for _, t := range Order(round) {
			run, err := measure(ctx, d, srv.Endpoint(t), opt)
			run.Target, run.Scenario, run.Round, run.Server = d.Name(), PK, round, server
			emit(run)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// measure opens one connection on ep, proves its transport, and times it.
func measure(ctx context.Context, d drivers.Driver, ep drivers.Endpoint, opt Options) (results.Run, error) {
	run := results.Run{Transport: ep.Transport, Endpoint: ep}
	fail := func(err error) (results.Run, error) {
		run.Incomplete, run.Error = true, err.Error()
		return run, err
	}
	timeout := opt.OpTimeout
	if timeout <= 0 {
		timeout = DefaultOpTimeout
	}
	octx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.Open(octx, ep)
	if err != nil {
		return fail(drivers.Explain(err, ep))
	}
	defer conn.Close()
	v, err := drivers.CheckTransport(octx, conn, ep.Transport)
	run.Evidence = v.Evidence
	if err != nil {
		return fail(fmt.Errorf("%s over %s: %w", d.Name(), ep, err))
	}
	run.TransportVerified = true

	h := results.NewHistogram()
	var heartbeat atomic.Int64
	dog := startWatchdog(conn, &heartbeat, timeout)
	s := Loop(ctx, conn, opt.Warmup, opt.N, h, opt.Progress, &heartbeat)
	if dog.done() && s.Err != nil {
		s.Err = fmt.Errorf("the server did not answer for %s (--op-timeout), so dbsock closed the connection: %w", timeout, s.Err)
	}
	run.N, run.Errors, run.ElapsedNs = s.Ops, s.Errors, s.Elapsed.Nanoseconds()
	run.Latency = results.LatencyOf(h)
	if s.Elapsed > 0 {
		run.OpsPerSec = float64(s.Ops-s.Errors) / s.Elapsed.Seconds()
	}
	if run.Histogram, err = results.EncodeHistogram(h); err != nil {
		return fail(err)
	}
	if s.Err != nil {
		what := "stopped"
		if errors.Is(s.Err, context.Canceled) {
			what = "interrupted"
		}
		return fail(fmt.Errorf("%s over %s %s after %d of %d ops: %w", d.Name(), ep, what, s.Ops, opt.N, s.Err))
	}
	if s.LastErr != nil {
		run.Error = fmt.Sprintf("%d of %d ops failed, last: %v", s.Errors, s.Ops, s.LastErr)
	}
	return run, nil
}
