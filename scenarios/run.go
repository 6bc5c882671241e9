package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
)

// Run measures case c with settings s against the server over each of its
// paths (two or more endpoints: 127.0.0.1 TCP and its Unix socket, and any
// other route to it), round by round, as server instance in. Each round
// opens fresh connections on every path, verifies them server-side and
// warms them up, then times its ops as block groups: one block per path,
// in an order drawn from s.Seed (with two paths, a block pair). emit
// receives each round's runs, one per path, as soon as the round is done,
// including a failed or interrupted one (Incomplete). Run stops at the
// first failure.
func Run(ctx context.Context, d drivers.Driver, paths drivers.Paths, server drivers.ServerInfo, s Settings, c Case, in Instance, emit func(results.Run)) error {
	s = s.For(c)
	opt := caseRun{Settings: s, Case: c, Instance: in}
	rc := results.Case{Target: d.Name(), Scenario: c.Scenario, Concurrency: c.workers(),
		ValueSize: d.ValueSize(), Mode: d.Mode(), Rate: s.Rate, OwnQuery: c.OwnQuery}
	if p, ok := d.(drivers.Pipeliner); ok && p.Depth() > 1 {
		rc.Pipeline = p.Depth()
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("%s: no path to measure: give Run the endpoints of its server (127.0.0.1 TCP and its Unix socket at least)", d.Name())
	}
	if err := s.ValidateCase(c); err != nil {
		return err
	}
	if err := s.CheckMemory(c, int64(d.ValueSize()), rc.Pipeline, len(paths)); err != nil {
		return err
	}
	if s.Op == drivers.OpUpdate {
		rc.Op = s.Op
	}
	began := time.Now()
	if opt.Epoch.IsZero() {
		opt.Epoch = began
	}
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	keys := newCaseKeys(opt)
	var all []results.Run
	for round := 1; ; round++ {
		runs, err := measureRound(ctx, d, paths, opt, round, rng, keys)
		for i := range runs {
			op := runs[i].Op // a part of a mixed case names its kind
			runs[i].Case, runs[i].Round, runs[i].Instance, runs[i].Server = rc, round, opt.Number, server
			if opt.Op == drivers.OpMixed {
				runs[i].Op, runs[i].Mix = op, opt.Mix.String()
			}
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
func (o Settings) endOfCase(round int, elapsed time.Duration, runs []results.Run) string {
	if round < o.Rounds {
		return ""
	}
	if o.Precision <= 0 {
		return "rounds"
	}
	if precise(runs, o.Precision) {
		return "precision"
	}
	if elapsed+elapsed/time.Duration(round) > o.MaxDuration {
		return "max-duration"
	}
	return ""
}

// precise says whether the p50 speedup interval of every case in runs
// (a mixed case's reads and writes apart) is within precision.
func precise(runs []results.Run, precision float64) bool {
	byCase := map[results.Case][]results.Run{}
	for _, r := range runs {
		byCase[r.Case] = append(byCase[r.Case], r)
	}
	for _, rs := range byCase {
		if ci := results.PairedP50(rs); ci == nil || ci.HalfWidth() > precision {
			return false
		}
	}
	return true
}

// worker is one connection's share of one transport in a round.
type worker struct {
	conn     drivers.Conn // PK only
	op, warm Op
	// timer is conn when its ops are timed where they are done
	// (drivers.BlockTimer: an agent's connection); nil otherwise.
	timer     drivers.BlockTimer
	heartbeat Heartbeat
	// hists are the current block's latencies, one per part of the side
	// (under --op mixed, reads then writes).
	hists      []*hdrhistogram.Histogram
	keys       int    // how many keys were handed (drivers.Keyed), for the loop to walk
	writes     []bool // under --op mixed, which of the handed ops write
	phases     map[string]*hdrhistogram.Histogram
	sample     Sample
	dog        *Watchdog
	warmOK     int64 // successful warm-up ops
	warmWrites int64 // how many of them wrote
	warmErr    error // why a timer's warm-up stopped (timed elsewhere)
	// lag is the current block's schedule lag of each paced op (nil for a
	// closed loop).
	lag, late *hdrhistogram.Histogram
}

// measureRound is one round: open and verify every path's connections,
// warm them up, time the block groups (one block per path each, in an
// order drawn from rng). It returns every path's runs, in the order of
// paths; on failure, the runs measured so far, the failing one Incomplete
// with its error.
func measureRound(ctx context.Context, d drivers.Driver, paths drivers.Paths, opt caseRun, round int, rng *rand.Rand, keys *caseKeys) (_ []results.Run, err error) {
	sides := make([]*side, len(paths))
	defer func() {
		for _, s := range sides {
			if s != nil {
				s.close(errors.Is(err, ErrNoAnswer))
			}
		}
	}()
	failAll := func(failed int, err error) []results.Run {
		var runs []results.Run
		for i, s := range sides {
			switch {
			case i == failed:
				runs = append(runs, s.fail(err)...)
			case s != nil:
				runs = append(runs, s.fail(fmt.Errorf("round stopped early: %s failed", paths[failed].Transport.Label()))...)
			}
		}
		return runs
	}
	for _, i := range openOrder(len(paths), round) {
		s := newSide(ctx, paths[i], opt)
		if pl, ok := d.(drivers.Pipeliner); ok {
			s.step = pl.Depth() // a batch takes that many keys
		}
		sides[i] = s
		v, err := openWorkers(ctx, d, s, opt)
		s.record(v)
		if err != nil {
			return s.fail(err), err
		}
		s.run.TransportVerified = true
	}
	if failed, err := openExecStats(ctx, d, paths, sides, opt); err != nil {
		return failAll(failed, err), err
	} else if failed < 0 {
		defer sides[0].exec.r.Close()
	}
	for _, m := range []cpustat.Meter{opt.ServerCPU, opt.ClientCPU} {
		if r, ok := m.(cpustat.Refresher); ok {
			_ = r.Refresh() // a process per connection may have started (a server's, an agent's worker); Read says if it is gone
		}
	}
	if keys != nil {
		keys.hand(keys.warm, keys.warmW, opt.Warmup, sides...)
	}
	for _, i := range openOrder(len(paths), round) {
		if err := sides[i].warmUp(d, opt); err != nil {
			return sides[i].fail(err), err
		}
	}
	index := 0
	order := make([]int, len(paths))
	for j := 0; j < opt.blocks(); j++ {
		blockOrder(rng, order)
		n := opt.blockOps(j)
		if opt.Duration > 0 {
			n = maxKeyBuffer
		}
		if keys != nil {
			keys.hand(keys.timed, keys.timedW, n, sides...)
		}
		for _, i := range order {
			err := sides[i].timeBlock(d, opt, j, index)
			if keys != nil {
				keys.mark(sides[i])
			}
			index++
			if err != nil {
				return failAll(i, err), err
			}
		}
	}
	var runs []results.Run
	for _, s := range sides {
		runs = append(runs, s.finish()...)
	}
	return runs, nil
}

// openWorkers opens (PK) or probes (Connect) and verifies one connection
// per worker, one at a time, so that a refusal names the worker and
// nothing hides in a crowd. It returns the first worker's verification.
func openWorkers(ctx context.Context, d drivers.Driver, s *side, opt caseRun) (drivers.Verification, error) {
	var first drivers.Verification
	ep := s.ep
	for i := range s.ws {
		w := &worker{phases: map[string]*hdrhistogram.Histogram{}}
		for range s.parts {
			w.hists = append(w.hists, results.NewHistogram())
		}
		s.ws[i] = w
		var conn drivers.Conn
		err := drivers.Within(ctx, openLimit(d, opt.timeout()), func(octx context.Context) (err error) {
			conn, err = d.Open(octx, ep)
			return err
		})
		if err != nil {
			if drivers.TimedOut(err) && ctx.Err() == nil {
				return first, setting.Err("worker %d of %d: %s over %s did not answer within %s (%s) while connecting%s", i+1, len(s.ws), d.Name(), ep, opt.timeout(), setting.OpTimeout, tlsSilence(ep))
			}
			return first, setting.Err("worker %d of %d: %w", i+1, len(s.ws), drivers.Explain(err, ep))
		}
		var v drivers.Verification
		err = drivers.Within(ctx, opt.timeout(), func(octx context.Context) (err error) {
			v, err = drivers.CheckTransport(octx, conn, ep)
			return err
		})
		if i == 0 {
			first = v
		}
		if _, ok := conn.(drivers.Keyed); !ok && err == nil && opt.Op == drivers.OpMixed {
			err = setting.Err("%s cannot mix reads and writes (%s %s); use %s %s or %s", d.Name(), setting.Op, drivers.OpMixed, setting.Op, drivers.OpRead, drivers.OpUpdate)
		}
		if err != nil {
			conn.Close()
			if drivers.TimedOut(err) && ctx.Err() == nil {
				return first, setting.Err("%s over %s did not answer within %s (%s) while dbsock verified the transport", d.Name(), ep, opt.timeout(), setting.OpTimeout)
			}
			return first, setting.Err("%s over %s: %w", d.Name(), ep, err)
		}
		if r, ok := conn.(drivers.Reconnector); ok && opt.Scenario == Connect {
			// Timed where it is done (an agent): each op opens its own
			// there, and the verified connection stays open beside them.
			if w.timer, err = r.Reconnecting(); err != nil {
				conn.Close()
				return first, setting.Err("%s over %s: %w", d.Name(), ep, err)
			}
			w.conn = conn
			w.op, _ = w.timer.(Op) // the timer takes the keys
			w.warm = w.op
		} else if opt.Scenario == Connect {
			conn.Close() // each op opens its own
			w.warm = &connectOp{ctx: s.ctx, open: opener(d, ep), connect: results.NewHistogram(), query: results.NewHistogram()}
			w.phases[PhaseConnect], w.phases[PhaseQuery] = results.NewHistogram(), results.NewHistogram()
			for _, p := range []string{PhaseDial, PhaseTLS, PhaseLogin} {
				w.phases[p] = results.NewHistogram()
			}
			w.op = &connectOp{ctx: s.ctx, open: opener(d, ep), connect: w.phases[PhaseConnect], query: w.phases[PhaseQuery],
				dial: w.phases[PhaseDial], tls: w.phases[PhaseTLS], login: w.phases[PhaseLogin], secure: ep.Transport.Info().TLS}
		} else {
			w.conn, w.op, w.warm = conn, conn, conn
			w.timer, _ = conn.(drivers.BlockTimer)
		}
		if opt.Rate > 0 {
			w.phases[PhaseUncorrected] = results.NewHistogram()
			w.lag, w.late = results.NewHistogram(), results.NewHistogram()
		}
	}
	return first, nil
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
func (s *side) warmUp(d drivers.Driver, opt caseRun) error {
	if opt.Warmup <= 0 {
		return nil
	}
	if g := s.group(opt); g != nil {
		if err := s.warmGroup(g, opt); err != nil {
			return setting.Err("%s over %s during warm-up: %w", d.Name(), s.ep, err)
		}
		return nil
	}
	var wg sync.WaitGroup
	for _, w := range s.ws {
		w.dog = StartWatchdog(s.closer(w), &w.heartbeat, opt.timeout())
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			cfg := LoopConfig{Warmup: opt.Warmup, Heartbeat: &w.heartbeat, Writes: w.writes, Keys: w.keys, Step: s.step}
			var ws Sample
			if w.timer != nil {
				ws = timedElsewhere(s.ctx, w.timer, cfg, nil)
				w.warmErr = ws.Err
			} else {
				ws = Loop(s.ctx, w.warm, cfg, nil, nil)
			}
			w.warmOK, w.warmWrites = ws.WarmOK, ws.WarmWrites
		}(w)
	}
	wg.Wait()
	fired := false
	for _, w := range s.ws {
		fired = w.dog.Done() || fired
	}
	if fired {
		return setting.Err("%s over %s: %w for %s (%s) during warm-up, so dbsock gave up on the connection", d.Name(), s.ep, ErrNoAnswer, opt.timeout(), setting.OpTimeout)
	}
	if err := s.ctx.Err(); err != nil {
		return setting.Err("%s over %s interrupted during warm-up: %w", d.Name(), s.ep, err)
	}
	for _, w := range s.ws {
		if w.warmErr != nil {
			return setting.Err("%s over %s during warm-up: %w", d.Name(), s.ep, w.warmErr)
		}
	}
	return nil
}

// timeBlock times block pair j (the round's index-th block) on this side:
// every worker's loop starts at once, each watched by a watchdog, with the
// CPU counters read at the window's edges; the block's figures are kept on
// their own and pooled into the run.
func (s *side) timeBlock(d drivers.Driver, opt caseRun, j, index int) error {
	var (
		wg          sync.WaitGroup
		startTiming = make(chan struct{})
		start       time.Time
		span        time.Duration // a group's ops on the agent's clock
	)
	stop := s.startBlock(opt, j, &wg, startTiming, &start, &span)
	defer stop()
	// The counters are read at the window's edges: the server first and
	// the client last before it opens, the client first after it closes,
	// so that reading the server's counters is not charged to the client.
	if err := s.audit(true); err != nil {
		return err
	}
	e0 := s.exec.read(s.ctx)
	s0, serr0 := s.readServer(opt, false)
	c0, cerr0 := readMeter(opt.ClientCPU)
	start = time.Now()
	close(startTiming)
	wg.Wait()
	elapsed := time.Since(start)
	c1, cerr1 := readMeter(opt.ClientCPU)
	s1, serr1 := s.readServer(opt, true)
	if s.exec != nil && s.hung() {
		s.exec.failed = true // a server that stopped answering would hold the read for its timeout
	}
	if e1 := s.exec.read(s.ctx); s.exec != nil && !s.exec.failed {
		s.exec.total.Calls += max(e1.Calls-e0.Calls, 0)
		s.exec.total.ExecNs += max(e1.ExecNs-e0.ExecNs, 0)
	}
	// The audit's error (a server gone, or what the client reported
	// refused) ends the case once the block's ops are kept: the ops done
	// before a server went away stay in the run, as Loop's do, and a
	// refused client's case is void whatever it kept (results).
	auditErr := s.audit(false)
	s.client = s.client.Add(c1.Sub(c0))
	s.server = s.server.Add(s1.Sub(s0))
	s.clientErr = errors.Join(s.clientErr, cerr0, cerr1)
	s.serverErr = errors.Join(s.serverErr, serr0, serr1)
	if span > 0 {
		elapsed = span // the agent's ops, without its answer's encoding and transfer
	}
	b := results.Block{Pair: j, Index: index, StartNs: start.Sub(opt.Epoch).Nanoseconds(), ElapsedNs: elapsed.Nanoseconds()}
	if opt.ServerCPU != nil && serr0 == nil && serr1 == nil && len(s.parts) == 1 {
		b.ServerCPUNs = s1.Sub(s0).CPUNs // the capacity comparison pairs it per op (under --op mixed it cannot be split)
	}
	err := s.collect(d, opt, b)
	if err == nil || errors.Is(auditErr, drivers.ErrDisbelieved) {
		err = cmp.Or(auditErr, err)
	}
	return err
}

// startBlock starts block pair j's loops, each waiting for startTiming
// (start is read once it is closed): every worker's own, each watched by
// a watchdog, or one group's for all (span gets its ops' span on the
// agent's clock). wg is done when they are; stop releases them.
func (s *side) startBlock(opt caseRun, j int, wg *sync.WaitGroup, startTiming <-chan struct{}, start *time.Time, span *time.Duration) (stop func()) {
	g := s.group(opt)
	var cancels []context.CancelFunc
	for i, w := range s.ws {
		for _, h := range w.hists {
			h.Reset()
		}
		if w.lag != nil {
			w.lag.Reset()
			w.late.Reset()
		}
		// A watchdog that gives up also ends the worker's loop, so that a
		// paced loop does not wait out its schedule on a closed connection.
		ctx, cancel := context.WithCancel(s.ctx)
		cancels = append(cancels, cancel)
		closer := s.closer(w)
		w.dog = StartWatchdog(closerFunc(func() error { cancel(); return closer.Close() }), &w.heartbeat, opt.timeout())
		if g != nil {
			continue
		}
		wg.Add(1)
		go func(i int, w *worker) {
			defer wg.Done()
			defer cancel()
			if _, ok := w.op.(drivers.ThreadBound); ok {
				runtime.LockOSThread() // blocking system calls, as a C client makes them
				defer runtime.UnlockOSThread()
			}
			<-startTiming
			if w.timer != nil {
				w.sample = timedElsewhere(ctx, w.timer, s.loopConfig(opt, j, i, w, *start), w.hists[0])
				return
			}
			w.sample = Loop(ctx, w.op, s.loopConfig(opt, j, i, w, *start), w.hists[0], w.phases[PhaseUncorrected])
		}(i, w)
	}
	if g != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startTiming
			*span = s.timeGroup(s.ctx, g, opt, j, *start)
		}()
	}
	return func() {
		for _, c := range cancels {
			c()
		}
	}
}

// audit starts (or ends) the audit of every worker's block whose ops
// are timed elsewhere (drivers.BlockAuditor), outside the block's window:
// an audit that fails fails the block, with what disagreed.
func (s *side) audit(start bool) error {
	for _, w := range s.ws {
		a, ok := w.timer.(drivers.BlockAuditor)
		if !ok || (!start && w.sample.Err != nil) {
			continue
		}
		var err error
		if start {
			err = a.StartAudit(s.ctx)
		} else {
			err = a.EndAudit(s.ctx)
		}
		if err != nil {
			return setting.Err("%s: %w", s.ep, err)
		}
	}
	return nil
}

// hung says whether a worker's watchdog gave up on the server in this
// block.
func (s *side) hung() bool {
	for _, w := range s.ws {
		if w.dog != nil && w.dog.Fired() {
			return true
		}
	}
	return false
}

// loopConfig is worker i's loop for block pair j, its clock started at
// start (read only once the block's start channel is closed).
func (s *side) loopConfig(opt caseRun, j, i int, w *worker, start time.Time) LoopConfig {
	lc := LoopConfig{N: workerOps(opt.blockOps(j), len(s.ws), i), Progress: opt.Progress, Heartbeat: &w.heartbeat, Keys: w.keys, Step: s.step}
	if len(w.hists) > 1 {
		lc.Writes, lc.WriteHist = w.writes, w.hists[1]
	}
	if dur := opt.Duration / time.Duration(opt.blocks()); dur > 0 {
		lc.Until = start.Add(dur)
	}
	if opt.Rate > 0 {
		lc.Interval = time.Duration(float64(len(s.ws)) / opt.Rate * float64(time.Second))
		lc.Offset = lc.Interval * time.Duration(i) / time.Duration(len(s.ws))
		lc.Lag, lc.Late = w.lag, w.late
	}
	return lc
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// opener opens fresh connections on ep for the connect scenario.
func opener(d drivers.Driver, ep drivers.Endpoint) Opener {
	return func(ctx context.Context) (drivers.Conn, error) { return d.Open(ctx, ep) }
}

// tlsSilence says, for the tls path, why a connection may hang: a plain
// port takes the TLS handshake for the start of a command and waits.
func tlsSilence(ep drivers.Endpoint) string {
	if !ep.Transport.Info().TLS {
		return ""
	}
	return "; a port that does not serve TLS never answers a TLS handshake: check that " + ep.Address + " is the server's TLS port"
}
