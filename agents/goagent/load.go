package goagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/scenarios"
)

// part is one connection's share of a load.
type part struct {
	id     string
	c      *conn
	ids    []int64
	n      int // ops to do (at most, under a duration)
	offset time.Duration
}

// parts checks l and returns each connection's part, before any starts.
func (a *Agent) parts(l agents.Load) ([]part, error) {
	switch {
	case len(l.IDs) == 0:
		return nil, errors.New("the load names no connection")
	case len(l.IDs) > MaxConnections:
		return nil, fmt.Errorf("the load has %d connections, over the %d this agent runs at once (its hello's max_connections)", len(l.IDs), MaxConnections)
	case len(l.Keys) != len(l.IDs) || (l.IntervalNs > 0 && len(l.OffsetsNs) != len(l.IDs)):
		return nil, fmt.Errorf("the load has %d ids, %d key lists and %d offsets: one each per connection", len(l.IDs), len(l.Keys), len(l.OffsetsNs))
	case l.IntervalNs < 0 || l.DurationNs < 0 || l.MaxOps < 0 || l.Warmup < 0:
		return nil, errors.New("the load's interval_ns, duration_ns, max_ops and warmup must be >= 0")
	case l.DurationNs > 0 && l.MaxOps == 0 && l.IntervalNs == 0:
		return nil, errors.New("a closed-loop load with duration_ns needs max_ops > 0 (the ops each connection may do)")
	}
	ps, seen, total := make([]part, len(l.IDs)), map[string]bool{}, 0
	for i, id := range l.IDs {
		if seen[id] {
			return nil, fmt.Errorf("the load names connection %s twice", id)
		}
		seen[id] = true
		p, err := a.part(l, i)
		if err != nil {
			return nil, fmt.Errorf("the load's connection %s: %w", id, err)
		}
		ps[i], total = p, total+p.n
	}
	if total > MaxLoadOps {
		return nil, fmt.Errorf("the load has over %d ops: split it", MaxLoadOps)
	}
	return ps, nil
}

func (a *Agent) part(l agents.Load, i int) (part, error) {
	c, err := a.conn(l.IDs[i], l.ValueLength)
	if err == nil {
		c.connect, err = connectScenario(l.Scenario)
	}
	if err != nil {
		return part{}, err
	}
	ids, err := a.ids(l.Keys[i])
	if err != nil {
		return part{}, err
	}
	p := part{id: l.IDs[i], c: c, ids: ids, n: len(ids)}
	if l.IntervalNs > 0 {
		p.offset = time.Duration(l.OffsetsNs[i])
		if p.offset < 0 {
			return part{}, errors.New("a negative offset")
		}
	}
	if l.DurationNs > 0 {
		if len(ids) == 0 {
			return part{}, errors.New("no keys")
		}
		p.n = l.MaxOps
		if l.IntervalNs > 0 {
			due := max(0, (l.DurationNs-int64(p.offset)+l.IntervalNs-1)/l.IntervalNs) // due times before T0 + duration
			p.n = int(due)
			if l.MaxOps > 0 {
				p.n = min(l.MaxOps, p.n)
			}
		}
	}
	return p, nil
}

// load runs l: each connection in a goroutine of its own warms up, then
// all start at one T0, a few ms ahead, closed loop or paced.
func (a *Agent) load(ctx context.Context, l agents.Load) (agents.LoadResult, error) {
	ps, err := a.parts(l)
	if err != nil {
		return agents.LoadResult{}, err
	}
	ready, results := make(chan error, len(ps)), make([]agents.ConnResult, len(ps))
	t0, done := make(chan time.Time), make(chan struct{}, len(ps))
	for i := range ps {
		go func() {
			defer func() { done <- struct{}{} }()
			p := &ps[i]
			p.c.useKeys(p.ids)
			ready <- p.warm(ctx, l.Warmup)
			start, ok := <-t0
			if ok {
				results[i] = p.run(ctx, start, time.Duration(l.IntervalNs), time.Duration(l.DurationNs))
			}
		}()
	}
	var failed error
	for range ps {
		failed = errors.Join(failed, <-ready)
	}
	if failed == nil {
		start := time.Now().Add(2*time.Millisecond + time.Duration(len(ps))*100*time.Microsecond)
		for range ps {
			t0 <- start
		}
	}
	close(t0)
	for range ps {
		<-done
	}
	if failed != nil {
		return agents.LoadResult{}, fmt.Errorf("the load did not start: %w", failed)
	}
	return agents.LoadResult{Type: agents.TypeLoadResult, Results: results}, nil
}

// warm runs the part's warm-up ops, closed loop.
func (p *part) warm(ctx context.Context, n int) error {
	if len(p.ids) == 0 {
		return nil
	}
	for i := range n {
		if err := p.c.do(ctx, i); err != nil {
			return fmt.Errorf("connection %s's warm-up op %d: %w", p.id, i, err)
		}
	}
	return nil
}

// run does the part's ops from t0: closed loop (interval 0), or op j
// started at its due time t0 + offset + j*interval (or when the op before
// it ended, if later), its lag the start minus the due time; under a
// duration, no op is started (closed) or due (paced) from t0+duration on.
// MaxFails failed ops in a row end it.
func (p *part) run(ctx context.Context, t0 time.Time, interval, duration time.Duration) agents.ConnResult {
	r := agents.ConnResult{ID: p.id, Ns: make([]int64, p.n)}
	pacer := scenarios.NewPacer()
	defer pacer.Stop()
	var end time.Time
	if duration > 0 {
		end = t0.Add(duration)
	}
	if interval > 0 {
		r.LagNs = make([]int64, p.n)
	} else if pacer.WaitUntil(ctx, t0) != nil {
		return r
	}
	j, fails := 0, 0
	for due := t0.Add(p.offset); j < p.n; j, due = j+1, due.Add(interval) {
		if interval > 0 {
			if !end.IsZero() && !due.Before(end) || pacer.WaitUntil(ctx, due) != nil {
				break
			}
		}
		start := time.Now()
		if interval == 0 && !end.IsZero() && !start.Before(end) {
			break
		}
		err := p.c.do(ctx, j)
		r.Ns[j] = time.Since(start).Nanoseconds()
		if interval > 0 {
			r.LagNs[j] = start.Sub(due).Nanoseconds()
		}
		if err == nil {
			fails = 0
			continue
		}
		r.Errors = append(r.Errors, agents.OpError{Index: j, Message: clip(err.Error(), MaxMessage)})
		if fails++; fails >= MaxFails {
			j++
			break
		}
	}
	r.Ns = r.Ns[:j]
	if r.LagNs != nil {
		r.LagNs = r.LagNs[:j]
	}
	return r
}
