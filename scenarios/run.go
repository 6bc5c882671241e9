package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/results"
)

// Run measures one case against the server at eps, round by round. Each
// round opens fresh connections on both transports, verifies them
// server-side and warms them up, then times its ops as block pairs: one TCP
// block and one Unix block, in an order drawn from opt.Seed. emit receives
// each round's two Runs as soon as the round is done, including a failed or
// interrupted one (Incomplete). Run stops at the first failure.
func Run(ctx context.Context, d drivers.Driver, eps drivers.Pair, server drivers.ServerInfo, opt Options, emit func(results.Run)) error {
	c := results.Case{Target: d.Name(), Scenario: opt.Scenario, Concurrency: opt.workers(),
		ValueSize: d.ValueSize(), Mode: d.Mode(), Rate: opt.Rate}
	if p, ok := d.(drivers.Pipeliner); ok && p.Depth() > 1 {
		c.Pipeline = p.Depth()
	}
	if opt.Op == drivers.OpUpdate {
		c.Op = opt.Op
	}
	began := time.Now()
	if opt.Epoch.IsZero() {
		opt.Epoch = began
	}
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	keys := newCaseKeys(opt)
	var all []results.Run
	for round := 1; ; round++ {
		runs, err := measureRound(ctx, d, eps, opt, round, rng, keys)
		for i := range runs {
			runs[i].Case, runs[i].Round, runs[i].Server = c, round, server
		}
		all = append(all, runs...)
		ended := ""
		if err == nil {
			ended = opt.endOfCase(round, time.Since(began), all)
		}
		for i := range runs {
			runs[i].EndedBy = ended
			emit(runs[i])
		}
		if err != nil || ended != "" {
			return err
		}
	}
}

// endOfCase says whether the case ends after round, and why: "rounds"
// when the planned rounds ran (no --precision), "precision" when the p50
// speedup is precise enough, "max-duration" when another round would run
// past MaxDuration; "" to go on.
func (o Options) endOfCase(round int, elapsed time.Duration, runs []results.Run) string {
	if round < o.Rounds {
		return ""
	}
	if o.Precision <= 0 {
		return "rounds"
	}
	if ci := results.PairedP50(runs); ci != nil && ci.HalfWidth() <= o.Precision {
		return "precision"
	}
	if elapsed+elapsed/time.Duration(round) > o.MaxDuration {
		return "max-duration"
	}
	return ""
}

// worker is one connection's share of one transport in a round.
type worker struct {
	conn      drivers.Conn // PK only
	op, warm  Op
	heartbeat atomic.Int64
	hist      *hdrhistogram.Histogram // the current block's latencies
	phases    map[string]*hdrhistogram.Histogram
	sample    Sample
	dog       *watchdog
	warmOK    int64 // successful warm-up ops
}

// side is one transport's workers in a round, and what they measured.
type side struct {
	ep      drivers.Endpoint
	opt     Options
	ws      []*worker
	ctx     context.Context // cancelled by a watchdog in the connect scenario
	cancel  context.CancelFunc
	run     results.Run
	hist    *hdrhistogram.Histogram // every block pooled
	block   *hdrhistogram.Histogram // the current block, all workers
	elapsed time.Duration
	lastErr error
	// CPU over the timed blocks; serverErr is why the server could not be
	// read (then the server's figures are left out).
	client, server cpustat.Sample
	clientErr      error
	serverErr      error
	// exec is the server's own account of the lookups in the timed blocks,
	// read over the round's stats connection (nil: the server gives none).
	exec       *execStats
	execSource string
	// touched marks the rows this side's ops read, when its ops read rows
	// handed to them (keyed).
	touched bitset
	keyed   bool
}

// execStats reads a server's own execution figures at block edges.
type execStats struct {
	r      drivers.ExecReader
	total  drivers.ExecStats
	failed bool
}

func (e *execStats) read(ctx context.Context) drivers.ExecStats {
	if e == nil || e.failed {
		return drivers.ExecStats{}
	}
	var s drivers.ExecStats
	err := drivers.Within(ctx, time.Second, func(ctx context.Context) (err error) {
		s, err = e.r.Read(ctx)
		return err
	})
	if err != nil {
		e.failed = true // leave the figure out rather than report part of it
	}
	return s
}

func newSide(ctx context.Context, ep drivers.Endpoint, opt Options) *side {
	s := &side{ep: ep, opt: opt, ws: make([]*worker, opt.workers()), run: results.Run{Transport: ep.Transport, Endpoint: ep},
		hist: results.NewHistogram(), block: results.NewHistogram()}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s
}

func (s *side) close() {
	s.cancel()
	for _, w := range s.ws {
		if w != nil && w.conn != nil {
			w.conn.Close()
		}
	}
}

// measureRound is one round: open and verify both transports' connections,
// warm them up, time the block pairs. It returns both transports' runs
// (TCP first); on failure, the runs measured so far, the failing one
// Incomplete with its error.
func measureRound(ctx context.Context, d drivers.Driver, eps drivers.Pair, opt Options, round int, rng *rand.Rand, keys *caseKeys) ([]results.Run, error) {
	sides := map[drivers.Transport]*side{}
	defer func() {
		for _, s := range sides {
			s.close()
		}
	}()
	for _, t := range Order(round) {
		s := newSide(ctx, eps.On(t), opt)
		sides[t] = s
		evidence, err := openWorkers(ctx, d, s, opt)
		s.run.Evidence = evidence
		if err != nil {
			return []results.Run{s.fail(err)}, err
		}
		s.run.TransportVerified = true
	}
	if es, ok := d.(drivers.ExecStatter); ok {
		var r drivers.ExecReader
		var source string
		err := drivers.Within(ctx, opt.timeout(), func(ctx context.Context) (err error) {
			r, source, err = es.OpenExecStats(ctx, eps.Unix)
			return err
		})
		if err == nil {
			defer r.Close()
			for _, s := range sides {
				s.exec, s.execSource = &execStats{r: r}, source
			}
		}
	}
	if r, ok := opt.ServerCPU.(cpustat.Refresher); ok {
		_ = r.Refresh() // the server may have started a process per connection; Read says if it is gone
	}
	if keys != nil {
		keys.hand(keys.warm, opt.Warmup, sides[drivers.TCP], sides[drivers.Unix])
	}
	for _, t := range Order(round) {
		if err := sides[t].warmUp(d, opt); err != nil {
			return []results.Run{sides[t].fail(err)}, err
		}
	}
	index := 0
	for j := 0; j < opt.blocks(); j++ {
		first := [2]drivers.Transport{drivers.TCP, drivers.Unix}
		if rng.IntN(2) == 1 {
			first = [2]drivers.Transport{drivers.Unix, drivers.TCP}
		}
		n := opt.blockOps(j)
		if opt.Duration > 0 {
			n = maxKeyBuffer
		}
		if keys != nil {
			keys.hand(keys.timed, n, sides[drivers.TCP], sides[drivers.Unix])
		}
		for _, t := range first {
			err := sides[t].timeBlock(d, opt, j, index)
			if keys != nil {
				keys.mark(sides[t])
			}
			index++
			if err != nil {
				other := sides[drivers.TCP]
				if t == drivers.TCP {
					other = sides[drivers.Unix]
				}
				runs := []results.Run{sides[t].fail(err), other.fail(fmt.Errorf("round stopped early: %s failed", t.Label()))}
				return runs, err
			}
		}
	}
	return []results.Run{sides[drivers.TCP].finish(), sides[drivers.Unix].finish()}, nil
}

// fail finishes the side's run as Incomplete with err.
func (s *side) fail(err error) results.Run {
	run := s.finish()
	run.Incomplete, run.Error = true, err.Error()
	return run
}

// openWorkers opens (PK) or probes (Connect) and verifies one connection
// per worker, one at a time, so that a refusal names the worker and
// nothing hides in a crowd. It returns the first worker's transport
// evidence.
func openWorkers(ctx context.Context, d drivers.Driver, s *side, opt Options) (string, error) {
	evidence := ""
	ep := s.ep
	for i := range s.ws {
		w := &worker{hist: results.NewHistogram(), phases: map[string]*hdrhistogram.Histogram{}}
		s.ws[i] = w
		var conn drivers.Conn
		err := drivers.Within(ctx, opt.timeout(), func(octx context.Context) (err error) {
			conn, err = d.Open(octx, ep)
			return err
		})
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return evidence, fmt.Errorf("worker %d of %d: %s over %s did not answer within %s (--op-timeout) while connecting", i+1, len(s.ws), d.Name(), ep, opt.timeout())
			}
			return evidence, fmt.Errorf("worker %d of %d: %w", i+1, len(s.ws), drivers.Explain(err, ep))
		}
		var v drivers.Verification
		err = drivers.Within(ctx, opt.timeout(), func(octx context.Context) (err error) {
			v, err = drivers.CheckTransport(octx, conn, ep.Transport)
			return err
		})
		if i == 0 {
			evidence = v.Evidence
		}
		if err != nil {
			conn.Close()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return evidence, fmt.Errorf("%s over %s did not answer within %s (--op-timeout) while dbsock verified the transport", d.Name(), ep, opt.timeout())
			}
			return evidence, fmt.Errorf("%s over %s: %w", d.Name(), ep, err)
		}
		if opt.Scenario == Connect {
			conn.Close() // each op opens its own
			w.warm = &connectOp{ctx: s.ctx, open: opener(d, ep), connect: results.NewHistogram(), query: results.NewHistogram()}
			w.phases[PhaseConnect], w.phases[PhaseQuery] = results.NewHistogram(), results.NewHistogram()
			w.op = &connectOp{ctx: s.ctx, open: opener(d, ep), connect: w.phases[PhaseConnect], query: w.phases[PhaseQuery]}
		} else {
			w.conn, w.op, w.warm = conn, conn, conn
		}
		if opt.Rate > 0 {
			w.phases[PhaseUncorrected] = results.NewHistogram()
		}
	}
	return evidence, nil
}

// closer is what a worker's watchdog closes: its connection, or in the
// connect scenario the side's context.
func (s *side) closer(w *worker) closerFunc {
	if a, ok := w.conn.(drivers.Aborter); ok {
		return func() error { return a.Abort() } // the library's Close may wait for the op in flight
	}
	if w.conn != nil {
		return func() error { return w.conn.Close() }
	}
	return func() error { s.cancel(); return nil }
}

// warmUp runs every worker's untimed ops at once, each watched by a
// watchdog.
func (s *side) warmUp(d drivers.Driver, opt Options) error {
	if opt.Warmup <= 0 {
		return nil
	}
	var wg sync.WaitGroup
	for _, w := range s.ws {
		w.dog = startWatchdog(s.closer(w), &w.heartbeat, opt.timeout())
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			w.warmOK = Loop(s.ctx, w.warm, LoopConfig{Warmup: opt.Warmup, Heartbeat: &w.heartbeat}, nil, nil).WarmOK
		}(w)
	}
	wg.Wait()
	fired := false
	for _, w := range s.ws {
		fired = w.dog.done() || fired
	}
	if fired {
		return fmt.Errorf("%s over %s: the server did not answer for %s (--op-timeout) during warm-up, so dbsock gave up on the connection", d.Name(), s.ep, opt.timeout())
	}
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("%s over %s interrupted during warm-up: %w", d.Name(), s.ep, err)
	}
	return nil
}

// timeBlock times block pair j (the round's index-th block) on this side:
// every worker's loop starts at once, each watched by a watchdog, with the
// CPU counters read at the window's edges; the block's figures are kept on
// their own and pooled into the run.
func (s *side) timeBlock(d drivers.Driver, opt Options, j, index int) error {
	var (
		wg          sync.WaitGroup
		startTiming = make(chan struct{})
		start       time.Time
	)
	for i, w := range s.ws {
		w.hist.Reset()
		w.dog = startWatchdog(s.closer(w), &w.heartbeat, opt.timeout())
		wg.Add(1)
		go func(i int, w *worker) {
			defer wg.Done()
			if _, ok := w.op.(drivers.ThreadBound); ok {
				runtime.LockOSThread() // blocking system calls, as a C client makes them
				defer runtime.UnlockOSThread()
			}
			<-startTiming
			w.sample = Loop(s.ctx, w.op, s.loopConfig(opt, j, i, w, start), w.hist, w.phases[PhaseUncorrected])
		}(i, w)
	}
	// The counters are read at the window's edges: the server first and
	// the client last before it opens, the client first after it closes,
	// so that reading the server's counters is not charged to the client.
	e0 := s.exec.read(s.ctx)
	s0, serr0 := readMeter(opt.ServerCPU)
	c0, cerr0 := readMeter(opt.ClientCPU)
	start = time.Now()
	close(startTiming)
	wg.Wait()
	elapsed := time.Since(start)
	c1, cerr1 := readMeter(opt.ClientCPU)
	s1, serr1 := readMeter(opt.ServerCPU)
	if e1 := s.exec.read(s.ctx); s.exec != nil {
		s.exec.total.Calls += max(e1.Calls-e0.Calls, 0)
		s.exec.total.ExecNs += max(e1.ExecNs-e0.ExecNs, 0)
	}
	s.client = s.client.Add(c1.Sub(c0))
	s.server = s.server.Add(s1.Sub(s0))
	s.clientErr = errors.Join(s.clientErr, cerr0, cerr1)
	s.serverErr = errors.Join(s.serverErr, serr0, serr1)
	return s.collect(d, opt, results.Block{Pair: j, Index: index, StartNs: start.Sub(opt.Epoch).Nanoseconds(), ElapsedNs: elapsed.Nanoseconds()})
}

// loopConfig is worker i's loop for block pair j, its clock started at
// start (read only once the block's start channel is closed).
func (s *side) loopConfig(opt Options, j, i int, w *worker, start time.Time) LoopConfig {
	lc := LoopConfig{N: opt.blockOps(j), Progress: opt.Progress, Heartbeat: &w.heartbeat}
	if dur := opt.Duration / time.Duration(opt.blocks()); dur > 0 {
		lc.Until = start.Add(dur)
	}
	if opt.Rate > 0 {
		lc.Interval = time.Duration(float64(len(s.ws)) / opt.Rate * float64(time.Second))
		lc.Offset = lc.Interval * time.Duration(i) / time.Duration(len(s.ws))
	}
	return lc
}

// collect pools the workers' block into b and the run, and says why the
// block stopped early, if it did.
func (s *side) collect(d drivers.Driver, opt Options, b results.Block) error {
	var errs []error
	fired := false
	s.block.Reset()
	for _, w := range s.ws {
		fired = w.dog.done() || fired
		s.block.Merge(w.hist)
		b.N += w.sample.Ops
		b.Errors += w.sample.Errors
		if w.sample.Err != nil {
			errs = append(errs, w.sample.Err)
		}
		if w.sample.LastErr != nil {
			s.lastErr = w.sample.LastErr
		}
	}
	l := results.LatencyOf(s.block)
	b.P50, b.Mean, b.P99 = l.P50, l.Mean, l.P99
	s.hist.Merge(s.block)
	s.run.Blocks = append(s.run.Blocks, b)
	s.run.N += b.N
	s.run.Errors += b.Errors
	s.elapsed += time.Duration(b.ElapsedNs)
	if len(errs) == 0 {
		return nil
	}
	what, first := "stopped", errs[0]
	if errors.Is(first, context.Canceled) && s.ctx.Err() != nil && !fired {
		what = "interrupted"
	}
	if fired {
		first = fmt.Errorf("the server did not answer for %s (--op-timeout), so dbsock gave up on the connection: %w", opt.timeout(), first)
	} else if what != "interrupted" {
		first = drivers.Explain(first, s.ep)
	}
	want := fmt.Sprint(opt.N * len(s.ws))
	if opt.Duration > 0 {
		want = "planned"
	}
	return fmt.Errorf("%s over %s %s after %d of %s ops: %w", d.Name(), s.ep, what, s.run.N, want, first)
}

// readMeter reads m; nothing when m is nil.
func readMeter(m cpustat.Meter) (cpustat.Sample, error) {
	if m == nil {
		return cpustat.Sample{}, nil
	}
	return m.Read()
}

// cpu turns the side's CPU totals into the run's figures.
func (s *side) cpu(ops int64) *results.CPU {
	opt := s.opt
	if opt.ClientCPU == nil || s.clientErr != nil {
		return nil
	}
	var sns, scsw, ssys *int64
	by := "not measured: " + opt.ServerCPUWhyNot
	switch {
	case opt.ServerCPU == nil:
	case s.serverErr != nil:
		by = "not measured: " + s.serverErr.Error()
	default:
		ns, csw, sys := s.server.CPUNs, s.server.Voluntary+s.server.Involuntary, s.server.Syscr+s.server.Syscw
		sns, scsw, ssys, by = &ns, &csw, &sys, opt.ServerCPU.Describe()
	}
	return results.NewCPU(ops, s.client.CPUNs, s.client.Voluntary+s.client.Involuntary, sns, scsw, by).
		WithSyscalls(s.client.Syscr+s.client.Syscw, ssys)
}

// finish pools the side's blocks and phases into its run.
func (s *side) finish() results.Run {
	run := s.run
	run.ElapsedNs = s.elapsed.Nanoseconds()
	if s.touched != nil {
		run.DistinctKeys = s.touched.count()
	}
	if opt := s.opt; opt.Op == drivers.OpUpdate {
		run.Writes = run.N - run.Errors
		for _, w := range s.ws {
			if w != nil {
				run.Writes += w.warmOK
			}
		}
	}
	run.Latency = results.LatencyOf(s.hist)
	if s.elapsed > 0 {
		run.OpsPerSec = float64(run.N-run.Errors) / s.elapsed.Seconds()
	}
	if s.lastErr != nil {
		run.Error = fmt.Sprintf("%d ops failed, last: %v", run.Errors, s.lastErr)
	}
	if len(run.Blocks) > 0 {
		run.CPU = s.cpu(run.N - run.Errors)
		if e := s.exec; e != nil && !e.failed && e.total.Calls > 0 {
			run.ServerExec = (*results.ServerExec)(nil).Pool(&results.ServerExec{Calls: e.total.Calls, ExecNs: e.total.ExecNs, Source: s.execSource})
		}
	}
	if err := run.SetHistogram(s.hist); err != nil {
		run.Error = err.Error()
	}
	phases := map[string]*hdrhistogram.Histogram{}
	for _, w := range s.ws {
		if w == nil {
			continue
		}
		for name, ph := range w.phases {
			if phases[name] == nil {
				phases[name] = results.NewHistogram()
			}
			phases[name].Merge(ph)
		}
	}
	if len(phases) > 0 {
		run.Phases = map[string]results.Phase{}
		for name, ph := range phases {
			enc, err := results.EncodeHistogram(ph)
			if err != nil {
				run.Error = err.Error()
			}
			run.Phases[name] = results.Phase{Latency: results.LatencyOf(ph), Histogram: enc}
		}
	}
	return run
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// opener opens fresh connections on ep for the connect scenario.
func opener(d drivers.Driver, ep drivers.Endpoint) Opener {
	return func(ctx context.Context) (drivers.Conn, error) { return d.Open(ctx, ep) }
}
