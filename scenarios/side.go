package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
)

// part is what one kind of op measured on a side: all its ops, or under
// --op mixed its reads (first) and its writes apart, each reported as a
// case of its own with its own paired speedup.
type part struct {
	op      string                  // "" for all ops; drivers.OpRead or drivers.OpUpdate under --op mixed
	hist    *hdrhistogram.Histogram // every block pooled
	block   *hdrhistogram.Histogram // the current block, all workers
	blocks  []results.Block
	n, errs int64
}

// side is one transport's workers in a round, and what they measured.
type side struct {
	ep      drivers.Endpoint
	opt     caseRun
	ws      []*worker
	ctx     context.Context // cancelled by a watchdog in the connect scenario
	cancel  context.CancelFunc
	run     results.Run // what all parts share: transport, endpoint, evidence
	parts   []*part
	elapsed time.Duration
	lastErr error
	// CPU over the timed blocks; serverErr is why the server could not be
	// read (then the server's figures are left out).
	client, server cpustat.Sample
	clientErr      error
	serverErr      error
	// The hop's share of the server's CPU (Instance.HopCPU): its total,
	// its reading at the open block's start, and why it could not be read.
	hop, hop0 cpustat.Sample
	hopErr    error
	// exec is the server's own account of the lookups in the timed blocks,
	// read over the round's stats connection (nil: the server gives none).
	exec       *execStats
	execSource string
	// touched marks the rows this side's ops read, when its ops read rows
	// handed to them (keyed).
	touched bitset
	keyed   bool
	// step is how many keys one op takes: its pipeline depth.
	step int
	// lag pools the paced ops' schedule lag over the timed blocks; block
	// is the current block's (nil for a closed loop).
	lag, blockLag, blockLate *hdrhistogram.Histogram
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

func newSide(ctx context.Context, ep drivers.Endpoint, opt caseRun) *side {
	s := &side{ep: ep, opt: opt, ws: make([]*worker, opt.workers()), run: results.Run{Transport: ep.Transport, Connection: results.Connection{Endpoint: ep}}}
	ops := []string{""}
	if opt.Op == drivers.OpMixed {
		ops = []string{drivers.OpRead, drivers.OpUpdate}
	}
	for _, op := range ops {
		s.parts = append(s.parts, &part{op: op, hist: results.NewHistogram(), block: results.NewHistogram()})
	}
	if opt.Rate > 0 {
		s.lag, s.blockLag, s.blockLate = results.NewHistogram(), results.NewHistogram(), results.NewHistogram()
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s
}

// close closes the side's connections; after a server stopped answering
// (hung) they are aborted first, so that no client library's Close waits
// on it.
func (s *side) close(hung bool) {
	s.cancel()
	for _, w := range s.ws {
		if w == nil || w.conn == nil {
			continue
		}
		if a, ok := w.conn.(drivers.Aborter); ok && hung {
			a.Abort()
		}
		w.conn.Close()
	}
}

// fail finishes the side's runs as Incomplete with err (Disbelieved when
// err says the client's report was refused).
func (s *side) fail(err error) []results.Run {
	runs := s.finish()
	for i := range runs {
		runs[i].Incomplete, runs[i].Error = true, err.Error()
		runs[i].Disbelieved = errors.Is(err, drivers.ErrDisbelieved)
	}
	return runs
}

// collect pools the workers' block into b (one per part) and the runs,
// and says why the block stopped early, if it did.
func (s *side) collect(d drivers.Driver, opt caseRun, b results.Block) error {
	var errs []error
	fired := false
	for _, w := range s.ws {
		hung := w.dog.Done()
		fired = hung || fired
		switch {
		case w.sample.Err != nil:
			errs = append(errs, w.sample.Err)
		case hung && w.sample.LastErr != nil:
			errs = append(errs, w.sample.LastErr) // its connection is closed: fewer than MaxConsecutiveErrors ops were left
		}
		if w.sample.LastErr != nil {
			s.lastErr = w.sample.LastErr
		}
	}
	if s.blockLag != nil {
		s.blockLag.Reset()
		s.blockLate.Reset()
		for _, w := range s.ws {
			s.blockLag.Merge(w.lag)
			s.blockLate.Merge(w.late)
		}
		s.lag.Merge(s.blockLag)
		b.LagP50Ns, b.LagP99Ns = s.blockLag.ValueAtQuantile(50), s.blockLag.ValueAtQuantile(99)
		b.LateP99Ns = s.blockLate.ValueAtQuantile(99)
	}
	for k, p := range s.parts {
		pb := b
		p.block.Reset()
		for _, w := range s.ws {
			p.block.Merge(w.hists[k])
			ops, errors := w.sample.Ops, w.sample.Errors
			switch p.op {
			case drivers.OpRead:
				ops, errors = ops-w.sample.Writes, errors-w.sample.WriteErrors
			case drivers.OpUpdate:
				ops, errors = w.sample.Writes, w.sample.WriteErrors
			}
			pb.N += ops
			pb.Errors += errors
		}
		l := results.LatencyOf(p.block)
		pb.P50, pb.Mean, pb.P99 = l.P50, l.Mean, l.P99
		p.hist.Merge(p.block)
		p.blocks = append(p.blocks, pb)
		p.n += pb.N
		p.errs += pb.Errors
	}
	s.elapsed += time.Duration(b.ElapsedNs)
	if len(errs) == 0 {
		return nil
	}
	what, first := "stopped", errs[0]
	if errors.Is(first, context.Canceled) && s.ctx.Err() != nil && !fired {
		what = "interrupted"
	}
	if fired {
		first = setting.Err("%w for %s (%s), so dbsock gave up on the connection: %w", ErrNoAnswer, opt.timeout(), setting.OpTimeout, first)
	} else if what != "interrupted" {
		first = drivers.Explain(first, s.ep)
	}
	want := fmt.Sprint(opt.N)
	if opt.Duration > 0 {
		want = "planned"
	}
	done := int64(0)
	for _, p := range s.parts {
		done += p.n
	}
	return setting.Err("%s over %s %s after %d of %s ops: %w", d.Name(), s.ep, what, done, want, first)
}

// readMeter reads m; nothing when m is nil.
func readMeter(m cpustat.Meter) (cpustat.Sample, error) {
	if m == nil {
		return cpustat.Sample{}, nil
	}
	return m.Read()
}

// readServer reads the server's meter at a block's start or end, and
// the hop's in front of it where it has one (Instance.HopCPU).
func (s *side) readServer(opt caseRun, end bool) (cpustat.Sample, error) {
	if opt.HopCPU != nil {
		h, err := opt.HopCPU.Read()
		s.hopErr = errors.Join(s.hopErr, err)
		if end {
			s.hop = s.hop.Add(h.Sub(s.hop0))
		}
		s.hop0 = h
	}
	return readMeter(opt.ServerCPU)
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
		if s.server.NoSwitches { // macOS: CPU time only
			scsw, ssys = nil, nil
		}
		if s.server.NoSyscalls { // another user's server, to a dbsock that is not root
			ssys = nil
		}
	}
	var cwait, swait *int64
	if s.client.HasWait && s.clientErr == nil {
		v := s.client.WaitNs
		cwait = &v
	}
	if sns != nil && s.server.HasWait {
		v := s.server.WaitNs
		swait = &v
	}
	c := results.NewCPU(ops, s.client.CPUNs, s.client.Voluntary+s.client.Involuntary, sns, scsw, by).
		WithSyscalls(s.client.Syscr+s.client.Syscw, ssys).WithWaits(cwait, swait)
	if opt.HopCPU != nil && sns != nil && s.hopErr == nil {
		c = c.WithHop(s.hop.CPUNs, opt.HopCPU.Describe())
	}
	return c
}

// finish pools the side's blocks and phases into its runs: one, or under
// --op mixed one for the reads and one for the writes.
func (s *side) finish() []results.Run {
	var runs []results.Run
	for _, p := range s.parts {
		runs = append(runs, s.finishPart(p))
	}
	return runs
}

// finishPart is part p's run.
func (s *side) finishPart(p *part) results.Run {
	run := s.run
	run.Op = p.op
	run.Blocks, run.N, run.Errors = p.blocks, p.n, p.errs
	run.ElapsedNs = s.elapsed.Nanoseconds()
	if s.touched != nil {
		run.DistinctKeys = s.touched.count()
	}
	if s.opt.Op == drivers.OpUpdate || p.op == drivers.OpUpdate {
		run.Writes = run.N - run.Errors
		for _, w := range s.ws {
			if w != nil && p.op == drivers.OpUpdate {
				run.Writes += w.warmWrites
			} else if w != nil {
				run.Writes += w.warmOK
			}
		}
	}
	run.Latency = results.LatencyOf(p.hist)
	if s.lag != nil {
		run.Generator = results.NewGenerator(s.opt.Rate, p.blocks, results.LatencyOf(s.lag))
	}
	if s.elapsed > 0 {
		run.OpsPerSec = float64(run.N-run.Errors) / s.elapsed.Seconds()
	}
	if s.lastErr != nil {
		run.Error = fmt.Sprintf("%d ops failed, last: %v", run.Errors, s.lastErr)
	}
	if len(run.Blocks) > 0 && len(s.parts) == 1 {
		// CPU and the server's own time are of all the side's ops: under
		// --op mixed they cannot be split between reads and writes.
		run.CPU = s.cpu(run.N - run.Errors)
		if e := s.exec; e != nil && !e.failed && e.total.Calls > 0 {
			run.ServerExec = (*results.ServerExec)(nil).Pool(&results.ServerExec{Calls: e.total.Calls, ExecNs: e.total.ExecNs, Source: s.execSource})
		}
	}
	if err := run.SetHistogram(p.hist); err != nil {
		run.Error = err.Error()
	}
	s.finishPhases(&run)
	return run
}

// finishPhases pools the workers' phases into run.
func (s *side) finishPhases(run *results.Run) {
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
			if ph.TotalCount() == 0 {
				continue // a part this path has not (no TLS handshake on tcp)
			}
			enc, err := results.EncodeHistogram(ph)
			if err != nil {
				run.Error = err.Error()
			}
			run.Phases[name] = results.Phase{Latency: results.LatencyOf(ph), Histogram: enc}
		}
	}
}

// record keeps what the server said of the side's first connection: its
// evidence, and what the connection negotiated.
func (s *side) record(v drivers.Verification) {
	s.run.Evidence = v.Evidence
	if !v.Negotiated.IsZero() {
		n := v.Negotiated
		s.run.Negotiated = &n
	}
}
