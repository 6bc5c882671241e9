package agents

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/dbsock/dbsock/agents/stackfile"
)

// familyName is what a protocol family's name may be.
var familyName = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)

// ErrProtocol1 is wrapped when a load is asked of an agent that speaks
// protocol 1: one connection at a time, closed loop.
var ErrProtocol1 = errors.New("it speaks agent protocol 1, which measures one connection in a closed loop; many connections at once, an offered rate or a duration need protocol 2 (docs/agents.md, \"load\")")

// Goroutines is the worker model of dbsock's own Go agent (package
// agents/goagent): a goroutine per connection. No stack.json names it.
const Goroutines = "goroutines"

// checkCapabilities says what is wrong with a hello's capabilities: a
// hello of protocol 2 must say which protocol families it speaks, and
// may name a worker model only among stackfile.WorkerModels (or
// Goroutines).
func (h Hello) checkCapabilities() error {
	c := h.Capabilities
	if h.Protocol < 2 {
		return nil
	}
	if c == nil || len(c.Families) == 0 {
		return errors.New("protocol 2 says its capabilities, with the protocol families it speaks (\"capabilities\": {\"families\": [...]})")
	}
	for _, f := range c.Families {
		if !familyName.MatchString(f) {
			return fmt.Errorf("protocol family %q is not a family's name (lower-case letters and digits)", f)
		}
	}
	if c.Workers != "" && c.Workers != Goroutines && !slices.Contains(stackfile.WorkerModels, c.Workers) {
		return fmt.Errorf("workers %q is not a worker model (%v)", c.Workers, stackfile.WorkerModels)
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("max_connections %d is negative", c.MaxConnections)
	}
	return nil
}

// Speaks says whether the agent speaks protocol family f over path
// ("tls" or another): an agent of protocol 1 said nothing, and is asked
// (as before capabilities were said).
func (h Hello) Speaks(f, path string) error {
	c := h.Capabilities
	if h.Protocol < 2 || c == nil {
		return nil
	}
	if !slices.Contains(c.Families, f) {
		return fmt.Errorf("its hello says it speaks %v with %s, not %s", c.Families, h.Library, f)
	}
	if path == "tls" && !c.TLS {
		return fmt.Errorf("its hello says %s cannot open TLS connections", h.Library)
	}
	return nil
}

// CanLoad says whether the agent can run a load of conns connections,
// paced at an offered rate when paced.
func (h Hello) CanLoad(conns int, paced bool) error {
	c := h.Capabilities
	switch {
	case h.Protocol < 2 || c == nil:
		return ErrProtocol1
	case c.Workers == "":
		return errors.New("its hello names no worker model (capabilities.workers), so it runs no load of many connections")
	case c.MaxConnections > 0 && conns > c.MaxConnections:
		return fmt.Errorf("its hello says a load may have %d connections at most; %d were asked for", c.MaxConnections, conns)
	case paced && !c.OpenLoop:
		return errors.New("its hello says it does not pace a load at an offered rate (capabilities.open_loop)")
	}
	return nil
}

// CanConnect says whether the agent times the connect scenario.
func (h Hello) CanConnect() error {
	if h.Protocol < 2 || h.Capabilities == nil || !h.Capabilities.Connect {
		return errors.New("its hello does not say it times the connect scenario (capabilities.connect), where each op opens a connection of its own")
	}
	return nil
}

// Load runs l on the agent and checks its result: one entry per
// connection in order, one latency (and, paced, one lag) per op, none
// negative, errors only at ops that were done, and every connection's
// ops within the agent's span for it on dbsock's clock (Agent.answerSpan).
func (a *Agent) Load(ctx context.Context, l Load) (LoadResult, error) {
	if err := a.hello.CanLoad(len(l.IDs), l.IntervalNs > 0); err != nil {
		return LoadResult{}, fmt.Errorf("the %s agent: %w", a.spec.Stack, err)
	}
	if l.Scenario == ScenarioConnect {
		if err := a.hello.CanConnect(); err != nil {
			return LoadResult{}, fmt.Errorf("the %s agent: %w", a.spec.Stack, err)
		}
	}
	ops, err := checkLoad(l)
	if err != nil {
		return LoadResult{}, err
	}
	l.Type = TypeLoad
	what := fmt.Sprintf("load of %d ops on %d connections", ops, len(l.IDs))
	limit := MaxLine + ops*(2*MaxLatencyBytes+MaxErrorBytes)
	wait := a.limits.waitFor(ops, l.Scenario) + l.schedule()
	var r LoadResult
	if err := a.requestWithin(ctx, what, l, TypeLoadResult, &r, limit, wait); err != nil {
		return LoadResult{}, err
	}
	if len(r.Results) != len(l.IDs) {
		return LoadResult{}, a.fail(fmt.Errorf("it answered the %s with %d results: one per connection is the protocol", what, len(r.Results)))
	}
	span := a.answerSpan()
	for c := range r.Results {
		if err := a.checkConnResult(l, c, &r.Results[c], span); err != nil {
			return LoadResult{}, a.fail(fmt.Errorf("%s, connection %s: %w", what, l.IDs[c], err))
		}
	}
	return r, nil
}

// checkLoad checks a load before it is sent; it returns its ops (warm-up
// included) in all.
func checkLoad(l Load) (int, error) {
	if len(l.IDs) == 0 || len(l.Keys) != len(l.IDs) || (l.IntervalNs > 0 && len(l.OffsetsNs) != len(l.IDs)) {
		return 0, fmt.Errorf("load: %d connections, %d key lists and %d offsets; want one each", len(l.IDs), len(l.Keys), len(l.OffsetsNs))
	}
	if l.IntervalNs < 0 || l.Warmup < 0 || l.DurationNs < 0 || (l.DurationNs > 0) != (l.MaxOps > 0) {
		return 0, fmt.Errorf("load: interval %d ns, warm-up %d, duration %d ns with at most %d ops: none may be negative, and a duration needs its most ops", l.IntervalNs, l.Warmup, l.DurationNs, l.MaxOps)
	}
	ops := 0
	for c, keys := range l.Keys {
		if len(keys) == 0 {
			return 0, fmt.Errorf("load: connection %s has no keys", l.IDs[c])
		}
		ops += l.Warmup + l.opsOf(c)
	}
	if ops > MaxOps {
		return 0, fmt.Errorf("load of %d ops on %d connections: at most %d in one request", ops, len(l.IDs), MaxOps)
	}
	return ops, nil
}

// opsOf is the most timed ops connection c may do.
func (l Load) opsOf(c int) int {
	if l.DurationNs > 0 {
		return l.MaxOps
	}
	return len(l.Keys[c])
}

// schedule is how long the load's timed part lasts at the least: its last
// op's due time (paced), or its duration.
func (l Load) schedule() time.Duration {
	var last int64
	if l.DurationNs > 0 {
		return time.Duration(l.DurationNs)
	}
	if l.IntervalNs > 0 {
		for c, off := range l.OffsetsNs {
			last = max(last, off+int64(l.opsOf(c)-1)*l.IntervalNs)
		}
	}
	return time.Duration(last)
}

// checkConnResult checks connection c's entry of a load's result.
func (a *Agent) checkConnResult(l Load, c int, r *ConnResult, wall time.Duration) error {
	paced := l.IntervalNs > 0
	switch {
	case r.ID != l.IDs[c]:
		return fmt.Errorf("its result %d names %q", c, r.ID)
	case l.DurationNs == 0 && len(r.Ns) != len(l.Keys[c]) && !endedByFailures(r):
		return fmt.Errorf("it returned %d latencies for %d keys: one per key is the protocol, unless %d ops in a row failed", len(r.Ns), len(l.Keys[c]), MaxFailedInARow)
	case len(r.Ns) > l.opsOf(c):
		return fmt.Errorf("it returned %d latencies, more than the %d ops it may do", len(r.Ns), l.opsOf(c))
	case paced && len(r.LagNs) != len(r.Ns):
		return fmt.Errorf("it returned %d lags for %d ops: a paced op has one", len(r.LagNs), len(r.Ns))
	}
	if err := checkNs(r.Ns); err != nil {
		return err
	}
	if err := checkNs(r.LagNs); err != nil {
		return fmt.Errorf("lag: %w", err)
	}
	for i, e := range r.Errors {
		if e.Index < 0 || e.Index >= len(r.Ns) {
			return fmt.Errorf("it reported an error at op %d of %d", e.Index, len(r.Ns))
		}
		r.Errors[i].Message = clip(a.redact(e.Message), MaxErrorBytes)
	}
	if err := checkWall(BlockResult{Ns: r.Ns, Errors: r.Errors}, wall); err != nil {
		return fmt.Errorf("%w: %w", ErrUnseen, err)
	}
	if paced {
		return checkSchedule(l, c, r, wall)
	}
	return nil
}

// MaxFailedInARow is how many failed ops in a row end a connection's ops
// of a load early (as they end dbsock's own loop).
const MaxFailedInARow = 10

// endedByFailures says whether a connection's ops ended with
// MaxFailedInARow failures in a row.
func endedByFailures(r *ConnResult) bool {
	n := len(r.Ns)
	if n < MaxFailedInARow || len(r.Errors) < MaxFailedInARow {
		return false
	}
	failed := make(map[int]bool, len(r.Errors))
	for _, e := range r.Errors {
		failed[e.Index] = true
	}
	for i := n - MaxFailedInARow; i < n; i++ {
		if !failed[i] {
			return false
		}
	}
	return true
}

// checkSchedule checks a paced connection's ops against dbsock's clock:
// each op ends at its due time plus its lag and its latency after T0,
// which is after the request was written, so no op can end later than
// the request's wall time.
func checkSchedule(l Load, c int, r *ConnResult, wall time.Duration) error {
	for j := range r.Ns {
		end := l.OffsetsNs[c] + int64(j)*l.IntervalNs + r.LagNs[j] + r.Ns[j]
		if end > wall.Nanoseconds() {
			return fmt.Errorf("%w: op %d was due %s after the load began and, with its lag and latency, ended %s after it, later than the whole request took on dbsock's clock (%s)",
				ErrUnseen, j, time.Duration(l.OffsetsNs[c]+int64(j)*l.IntervalNs), time.Duration(end), wall.Round(time.Microsecond))
		}
	}
	return nil
}
