package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
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
)

// Options are one case's loop settings.
type Options struct {
	Scenario    string        // PK or Connect
	N           int           // timed ops per worker, transport and round
	Duration    time.Duration // when set, each run lasts this long instead of N ops
	Warmup      int           // untimed ops per worker first, on the same connection
	Rounds      int           // odd rounds run TCP first, even rounds Unix first
	Concurrency int           // workers, each with its own connection (1 when 0)
	// Rate, when set, runs open loop: this many ops/s per transport, spread
	// over the workers (PK only).
	Rate float64
	// Progress, when set, counts timed ops done (in steps of 256), for a
	// progress bar that reads it from another goroutine.
	Progress *atomic.Int64
	// OpTimeout is how long a connection may go without finishing an op
	// (16 ops, strictly) before dbsock closes it and fails the run; 0 means
	// DefaultOpTimeout.
	OpTimeout time.Duration
}

func (o Options) workers() int { return max(o.Concurrency, 1) }

func (o Options) timeout() time.Duration {
	if o.OpTimeout <= 0 {
		return DefaultOpTimeout
	}
	return o.OpTimeout
}

// Order returns the transports of round (1-based) in the order they run:
// alternating so that drift over time does not favour one side.
func Order(round int) [2]drivers.Transport {
	if round%2 == 0 {
		return [2]drivers.Transport{drivers.Unix, drivers.TCP}
	}
	return [2]drivers.Transport{drivers.TCP, drivers.Unix}
}

// Run measures one case against the server at eps: for every round and transport, fresh
// connections verified server-side, warmed up and timed. emit receives each
// Run as soon as it is done, including a failed or interrupted one
// (Incomplete). Run stops at the first failure.
func Run(ctx context.Context, d drivers.Driver, eps drivers.Pair, server drivers.ServerInfo, opt Options, emit func(results.Run)) error {
	c := results.Case{Target: d.Name(), Scenario: opt.Scenario, Concurrency: opt.workers(),
		ValueSize: d.ValueSize(), Mode: d.Mode(), Rate: opt.Rate}
	for round := 1; round <= opt.Rounds; round++ {
		for _, t := range Order(round) {
			run, err := measure(ctx, d, eps.On(t), opt)
			run.Case, run.Round, run.Server = c, round, server
			emit(run)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// worker is one connection's share of a run.
type worker struct {
	conn      drivers.Conn // PK only
	heartbeat atomic.Int64
	hist      *hdrhistogram.Histogram
	phases    map[string]*hdrhistogram.Histogram
	sample    Sample
	dog       *watchdog
}

// measure opens the workers' connections on ep, proves their transport,
// warms them up, and times them all at once.
func measure(ctx context.Context, d drivers.Driver, ep drivers.Endpoint, opt Options) (results.Run, error) {
	run := results.Run{Transport: ep.Transport, Endpoint: ep}
	fail := func(err error) (results.Run, error) {
		run.Incomplete, run.Error = true, err.Error()
		return run, err
	}
	ws := make([]*worker, opt.workers())
	defer func() {
		for _, w := range ws {
			if w != nil && w.conn != nil {
				w.conn.Close()
			}
		}
	}()
	evidence, err := openWorkers(ctx, d, ep, opt, ws)
	run.Evidence = evidence
	if err != nil {
		return fail(err)
	}
	run.TransportVerified = true
	elapsed := timeWorkers(ctx, d, ep, opt, ws)
	errs, fired := mergeWorkers(&run, ws, elapsed)
	if len(errs) > 0 {
		what := "stopped"
		first := errs[0]
		if errors.Is(first, context.Canceled) && ctx.Err() != nil {
			what = "interrupted"
		}
		if fired {
			first = fmt.Errorf("the server did not answer for %s (--op-timeout), so dbsock gave up on the connection: %w", opt.timeout(), first)
		}
		want := fmt.Sprint(opt.N * len(ws))
		if opt.Duration > 0 {
			want = "planned"
		}
		return fail(fmt.Errorf("%s over %s %s after %d of %s ops: %w", d.Name(), ep, what, run.N, want, first))
	}
	return run, nil
}

// openWorkers opens (PK) or probes (Connect) and verifies one connection
// per worker, one at a time, so that a refusal names the worker and
// nothing hides in a crowd. It returns the first worker's transport
// evidence.
func openWorkers(ctx context.Context, d drivers.Driver, ep drivers.Endpoint, opt Options, ws []*worker) (string, error) {
	evidence := ""
	for i := range ws {
		w := &worker{hist: results.NewHistogram(), phases: map[string]*hdrhistogram.Histogram{}}
		ws[i] = w
		octx, cancel := context.WithTimeout(ctx, opt.timeout())
		conn, err := d.Open(octx, ep)
		if err != nil {
			cancel()
			return evidence, fmt.Errorf("worker %d of %d: %w", i+1, len(ws), drivers.Explain(err, ep))
		}
		v, err := drivers.CheckTransport(octx, conn, ep.Transport)
		cancel()
		if i == 0 {
			evidence = v.Evidence
		}
		if err != nil {
			conn.Close()
			return evidence, fmt.Errorf("%s over %s: %w", d.Name(), ep, err)
		}
		if opt.Scenario == Connect {
			conn.Close() // each op opens its own
		} else {
			w.conn = conn
		}
	}
	return evidence, nil
}

// timeWorkers warms every worker up, then starts their timed loops at
// once, each watched by a watchdog; it returns the wall time of the timed
// part.
func timeWorkers(ctx context.Context, d drivers.Driver, ep drivers.Endpoint, opt Options, ws []*worker) time.Duration {
	var (
		wg          sync.WaitGroup
		ready       sync.WaitGroup
		startTiming = make(chan struct{})
		start       time.Time
	)
	wctx, cancelWorkers := context.WithCancel(ctx)
	defer cancelWorkers()
	for i, w := range ws {
		var closer closerFunc
		if w.conn != nil {
			closer = func() error { return w.conn.Close() }
		} else {
			closer = func() error { cancelWorkers(); return nil }
		}
		w.dog = startWatchdog(closer, &w.heartbeat, opt.timeout())
		wg.Add(1)
		ready.Add(1)
		go func(i int, w *worker) {
			defer wg.Done()
			op, warmOp := Op(w.conn), Op(w.conn)
			if opt.Scenario == Connect {
				warmOp = &connectOp{ctx: wctx, open: opener(d, ep), connect: results.NewHistogram(), query: results.NewHistogram()}
				w.phases[PhaseConnect], w.phases[PhaseQuery] = results.NewHistogram(), results.NewHistogram()
				op = &connectOp{ctx: wctx, open: opener(d, ep), connect: w.phases[PhaseConnect], query: w.phases[PhaseQuery]}
			}
			// Warm up, then wait for every worker before timing.
			Loop(wctx, warmOp, LoopConfig{Warmup: opt.Warmup, Heartbeat: &w.heartbeat}, results.NewHistogram(), nil)
			ready.Done()
			<-startTiming
			lc := LoopConfig{N: opt.N, Progress: opt.Progress, Heartbeat: &w.heartbeat}
			if opt.Duration > 0 {
				lc.Until = start.Add(opt.Duration)
			}
			if opt.Rate > 0 {
				lc.Interval = time.Duration(float64(len(ws)) / opt.Rate * float64(time.Second))
				lc.Offset = lc.Interval * time.Duration(i) / time.Duration(len(ws))
				w.phases[PhaseUncorrected] = results.NewHistogram()
			}
			w.sample = Loop(wctx, op, lc, w.hist, w.phases[PhaseUncorrected])
		}(i, w)
	}
	ready.Wait()
	start = time.Now()
	close(startTiming)
	wg.Wait()
	return time.Since(start)
}

// mergeWorkers pools the workers into run: one histogram per phase, counts
// summed. It returns why workers stopped early, and whether a watchdog
// fired.
func mergeWorkers(run *results.Run, ws []*worker, elapsed time.Duration) (errs []error, fired bool) {
	h := results.NewHistogram()
	phases := map[string]*hdrhistogram.Histogram{}
	for _, w := range ws {
		fired = w.dog.done() || fired
		h.Merge(w.hist)
		for name, ph := range w.phases {
			if phases[name] == nil {
				phases[name] = results.NewHistogram()
			}
			phases[name].Merge(ph)
		}
		run.N += w.sample.Ops
		run.Errors += w.sample.Errors
		if w.sample.Err != nil {
			errs = append(errs, w.sample.Err)
		}
		if w.sample.LastErr != nil && run.Error == "" {
			run.Error = fmt.Sprintf("%d ops failed, last: %v", run.Errors, w.sample.LastErr)
		}
	}
	run.ElapsedNs = elapsed.Nanoseconds()
	run.Latency = results.LatencyOf(h)
	if elapsed > 0 {
		run.OpsPerSec = float64(run.N-run.Errors) / elapsed.Seconds()
	}
	if err := run.SetHistogram(h); err != nil {
		errs = append(errs, err)
	}
	if len(phases) > 0 {
		run.Phases = map[string]results.Phase{}
		for name, ph := range phases {
			enc, err := results.EncodeHistogram(ph)
			if err != nil {
				errs = append(errs, err)
			}
			run.Phases[name] = results.Phase{Latency: results.LatencyOf(ph), Histogram: enc}
		}
	}
	return errs, fired
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// opener opens fresh connections on ep for the connect scenario.
func opener(d drivers.Driver, ep drivers.Endpoint) Opener {
	return func(ctx context.Context) (drivers.Conn, error) { return d.Open(ctx, ep) }
}
