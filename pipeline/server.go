package pipeline

// The server's side of a target's run: who answers, under what time limit,
// seeding and settling, restarts between instances, and stopping.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// canRestart says whether srv is restarted between instances. A server
// dbsock cannot restart (one it did not start) gets its instances as
// fresh connections to the one server process, whether --instances was
// given or left at its default, and ti a warning that the interval covers
// that process only.
func (p Plan) canRestart(srv *supply.Server, ti *results.Target) bool {
	if p.Instances <= 1 || srv.CanRestart() {
		return true
	}
	w := results.Warn(results.NotRestarted, "dbsock did not start this server (provider %s), so it could not restart it: its %d instances are %d sets of fresh connections "+
		"to one server process, and the interval covers that process only.", srv.Provider, p.Instances, p.Instances)
	if len(ti.Warnings) == 0 || ti.Warnings[len(ti.Warnings)-1].String() != w.String() {
		ti.Warnings = append(ti.Warnings, w)
	}
	return false
}

// restart starts instance inst of t's server: it restarts the server,
// checks that the same server answers on both endpoints, seeds it again
// when it keeps nothing over a restart (t.Volatile: an in-memory server
// as dbsock runs it starts empty), and waits for it to go idle.
func (p Plan) restart(ctx context.Context, t *targets.Target, d drivers.Driver, srv *supply.Server, rows, inst int) error {
	began, pid := time.Now(), srv.PID
	if err := srv.Restart(ctx); err != nil {
		return setting.Err("start server instance %d of %d: %w", inst, p.Instances, err)
	}
	process := ""
	if pid > 0 {
		process = fmt.Sprintf(" (pid %d, was %d)", srv.PID, pid)
	}
	if _, err := p.identify(ctx, t, d, srv); err != nil {
		return setting.Err("server instance %d of %d: %w", inst, p.Instances, err)
	}
	if t.Volatile {
		if err := p.seed(ctx, t, d, srv, rows); err != nil {
			return setting.Err("server instance %d of %d: %w", inst, p.Instances, err)
		}
	} else if waited, idle := settle(ctx, srv.CPU); waited > 200*time.Millisecond {
		fmt.Fprintf(p.log(), "dbsock: %s: waited %s after the restart for the server to go idle%s\n", t.Name, waited.Round(time.Millisecond), stillBusy(idle))
	}
	fmt.Fprintf(p.log(), "dbsock: %s: server instance %d of %d ready in %s%s\n", t.Name, inst, p.Instances, time.Since(began).Round(time.Millisecond), process)
	return nil
}

// stopServer stops srv once t's cases are done (or failed with err): a
// server that stopped answering gets no grace.
func stopServer(t *targets.Target, srv *supply.Server, err error) error {
	limit := StopTimeout
	if errors.Is(err, scenarios.ErrNoAnswer) {
		limit = HungStopTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if serr := srv.Stop(ctx); serr != nil {
		return fmt.Errorf("stop %s server: %w", t.Name, serr)
	}
	return nil
}

// serverAnswered says that err is the server's own answer in its own
// protocol (an SQLSTATE, such as a SQL server's "the database system is
// starting up"), so what answers there needs no guessing: no PING line is
// sent to a server that has answered in its own protocol.
func serverAnswered(err error) bool {
	var state interface{ SQLState() string }
	return errors.As(err, &state) && state.SQLState() != ""
}

// identify asks the server what it is over each endpoint: both must be the
// same product, so that a socket of another kind of server (one target's
// socket given as another's) is said to be that before anything is timed.
func (p Plan) identify(ctx context.Context, t *targets.Target, d drivers.Driver, srv *supply.Server) (drivers.ServerInfo, error) {
	target := t.Name
	var infos [2]drivers.ServerInfo
	for i, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		err := p.answer(ctx, target, ep, firstContact, func(ctx context.Context) (err error) {
			infos[i], err = d.Info(ctx, ep)
			return err
		})
		if err != nil && ctx.Err() == nil && p.Reach != nil && !serverAnswered(err) {
			// The first contact: say what really answers there (another
			// kind of server, or something that is no server at all).
			err = setting.Err("%w; what answers at %s: %s", err, ep.Address, drivers.Sniff(ctx, ep))
		}
		if err != nil && i == 1 {
			return infos[0], setting.Err("%s over %s is not the %s that answers on TCP %s: %w; is it another server's socket?",
				target, ep, infos[0], srv.TCP().Address, err)
		}
		if err != nil {
			return infos[0], err
		}
	}
	if a, b := infos[0], infos[1]; a.Product != b.Product || a.Version != b.Version {
		return a, fmt.Errorf("%s: TCP %s reaches %s but Unix %s reaches %s: dbsock compares the two transports of one server", target, srv.TCP(), a, srv.Unix(), b)
	}
	// Two processes of the same server (a second instance, another port)
	// would publish a difference between servers as one between
	// transports; where the server names itself, both must be the same.
	if a, b := infos[0], infos[1]; a.Instance != "" && b.Instance != "" && a.Instance != b.Instance && !srv.SeedEach && !t.SeedEach {
		return a, fmt.Errorf("%s: TCP %s and Unix %s reach two different servers (%s, and %s): dbsock compares the two transports of one server; give the socket of the server listening on %s",
			target, srv.TCP().Address, srv.Unix().Address, a.Instance, b.Instance, srv.TCP().Address)
	}
	return infos[0], nil
}

// answer runs step against ep under the op timeout, so that a server that
// accepts and never answers cannot hang dbsock; the error says which server
// did not answer, over what, during which step.
func (p Plan) answer(ctx context.Context, target string, ep drivers.Endpoint, during string, step func(context.Context) error) error {
	return p.answerWithin(ctx, p.Loop.Timeout(), setting.Msg("%s", setting.OpTimeout), target, ep, during, step)
}

// answerWithin is answer with its own limit, which what names (in the
// settings' names, which the error's reader words).
func (p Plan) answerWithin(ctx context.Context, limit time.Duration, what setting.Message, target string, ep drivers.Endpoint, during string, step func(context.Context) error) error {
	// A plain dial first: a refused port or a missing socket gets its own
	// diagnosis, whatever the driver would make of it (some retry until
	// their deadline and report their whole topology).
	if p.Reach != nil {
		if err := drivers.Within(ctx, limit, func(ctx context.Context) error { return p.Reach(ctx, ep) }); err != nil &&
			ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			return setting.Err("%s over %s: %w", target, ep, drivers.Explain(err, ep))
		}
	}
	err := drivers.Within(ctx, limit, step)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s over %s: interrupted %s: %w", target, ep, during, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return setting.Err("%s over %s did not answer within %s (%s) %s; is a %s server really listening there?", target, ep, limit, what, during, target)
	case strings.HasPrefix(during, firstContact):
		return drivers.ExplainFirst(err, ep)
	}
	return drivers.Explain(err, ep)
}

// firstContact is what dbsock does when it first asks a server anything.
const firstContact = "while dbsock asked what server it is"

// describeServer records where the server came from and checks its
// endpoints.
func describeServer(srv *supply.Server, ti *results.Target) error {
	ti.Provenance = srv.Provenance
	said := make([]results.Warning, 0, len(srv.Warnings)+len(ti.Warnings))
	for _, w := range srv.Warnings { // the provider's, in its own words
		said = append(said, results.Says(w))
	}
	ti.Warnings, ti.Provenance.Warnings = append(said, ti.Warnings...), nil
	ti.Endpoints = []drivers.Endpoint{srv.TCP(), srv.Unix()}
	switch {
	case srv.PID > 0 && !placement.Supported:
		ti.ServerCPUs = placement.ErrNoAffinity.Error()
	case srv.PID > 0:
		cpus, err := placement.Affinity(srv.PID)
		if err != nil {
			return err
		}
		ti.ServerCPUs = placement.FormatList(cpus)
	case srv.CPUs != "":
		ti.ServerCPUs = srv.CPUs
	}
	for _, ep := range ti.Endpoints {
		if err := ep.Validate(); err != nil {
			return setting.Err("%s endpoint: %w", ti.Name, err)
		}
	}
	return nil
}

// seed creates the rows d reads (over both endpoints when they reach two
// instances), within seedLimit, then waits for the server to settle: a
// database writes what was seeded back in the background, which would
// otherwise land in the first blocks.
func (p Plan) seed(ctx context.Context, t *targets.Target, d drivers.Driver, srv *supply.Server, rows int) error {
	over := []drivers.Endpoint{srv.Unix()}
	if srv.SeedEach || t.SeedEach {
		over = append(over, srv.TCP())
	}
	over = append(over, srv.SeedAlso...)
	limit := seedLimit(p.Loop.Timeout(), rows, d.ValueSize())
	for _, ep := range over {
		what := setting.Msg("%s plus 1 ms per row and per 64 KiB of values", setting.OpTimeout)
		err := p.answerWithin(ctx, limit, what, t.Name, ep, "while dbsock seeded the rows", func(ctx context.Context) error { return d.Seed(ctx, ep) })
		if err != nil {
			return err
		}
	}
	if waited, idle := settle(ctx, srv.CPU); waited > 0 {
		fmt.Fprintf(p.log(), "dbsock: %s: waited %s after seeding for the server to go idle%s\n", t.Name, waited.Round(time.Millisecond), stillBusy(idle))
	}
	return nil
}

// seedLimit is how long seeding rows of valueSize bytes may take: the op
// timeout, a millisecond per row, and one per 64 KiB of values (10,000
// rows of 1 MiB, 10 GiB, get 2 min 40 s more than 10,000 rows of 6 B).
func seedLimit(timeout time.Duration, rows, valueSize int) time.Duration {
	rows = max(rows, 1)
	bytes := int64(rows) * int64(max(valueSize, 1))
	return timeout + time.Duration(rows)*time.Millisecond + time.Duration(bytes>>16)*time.Millisecond
}

// stillBusy is what a progress line adds when the server did not go idle
// in time.
func stillBusy(idle bool) string {
	if idle {
		return ""
	}
	return "; it was still busy, and dbsock went on"
}

// settle waits until the server's CPU use over a settleWindow is below
// 5% of one core, at most settleLimit; it says how long it waited and
// whether the server went idle. Without a meter it returns at once.
func settle(ctx context.Context, m cpustat.Meter) (time.Duration, bool) {
	return settleWithin(ctx, m, settleWindow, settleLimit)
}

// settleWindow is the window over which a server must be idle. The
// meters read CPU time in nanoseconds (every thread's schedstat under
// /proc, proc_pidinfo on macOS), so 5% of 25 ms (1.25 ms) is measured,
// not rounded to a clock tick. A window of 100 ms added 75 ms to each of
// a run's restarts and seedings (27 of them in "dbsock run all", 2 s);
// the warm-up, a thousand lookups per path by default, still comes
// between it and the first timed block.
const settleWindow = 25 * time.Millisecond

// settleLimit is the longest settle waits for a busy server.
const settleLimit = 10 * time.Second

// settleWithin is settle with its window and limit given.
func settleWithin(ctx context.Context, m cpustat.Meter, window, limit time.Duration) (time.Duration, bool) {
	if m == nil {
		return 0, true
	}
	began := time.Now()
	before, err := m.Read()
	for err == nil && ctx.Err() == nil && time.Since(began) < limit {
		timer := time.NewTimer(window)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
		after, rerr := m.Read()
		if rerr != nil {
			break
		}
		if busy := after.Sub(before).CPUNs; busy < int64(window)/20 {
			return time.Since(began), true
		}
		before = after
	}
	return time.Since(began), false
}
