package pipeline

// A client process is a sample, as a server instance is: whatever state a
// process settles into (its threads, where its runtime parks them, its
// memory's layout, what a JIT compiled) holds for the whole life of the
// process and differs from the next one's. dbsock restarts each server
// between instances so that the interval over instances covers the
// server's variation; the interval covers the client's only when each
// instance's client is a process of its own too (Kalibera and Jones's
// levels of repetition: docs/method.md). So each stack's agent, Go's
// among them (dbsock's own agent, ClientSide.GoAgent), is started afresh
// for every server instance of every case; the agent started with the
// stack says what it is and measures its timing overhead.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// procs are a stack's agent processes: the first, started with the
// stack (its hello says what the stack is, and it measured the stack's
// timing overhead), and how to start another like it for each server
// instance (pinned as dbsock is then: a run under several placements
// re-pins dbsock before each placement's turn).
type procs struct {
	first *agents.Agent
	spawn func(ctx context.Context) (*agents.Agent, error)
	// cpu is the meter of agent a's CPU time, and the pid it reads.
	cpu func(a *agents.Agent) (cpustat.Meter, int)
	// ended are how fresh processes ended badly after their work
	// (*agents.Teardown): their results stand, and the stack's stop
	// returns these errors with the first's, to be said as warnings.
	ended []error
}

// next is the agent for the next server instance: a fresh process,
// whose hello must say what the first's did; done ends it and says how,
// keeping a *agents.Teardown (the process's work was done) for stop.
// Without spawn, the first agent serves every instance.
func (pr *procs) next(ctx context.Context) (a *agents.Agent, done func() error, err error) {
	if pr.spawn == nil {
		return pr.first, func() error { return nil }, nil
	}
	a, err = pr.spawn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := sameClient(pr.first.Hello(), a.Hello()); err != nil {
		return nil, nil, errors.Join(err, a.Close())
	}
	return a, func() error {
		err := a.Close()
		if td := (*agents.Teardown)(nil); errors.As(err, &td) {
			pr.ended = append(pr.ended, err)
			return nil
		}
		return err
	}, nil
}

// stop ends the stack's first agent and returns how every one of its
// processes ended badly after its work.
func (pr *procs) stop() error {
	return errors.Join(append(pr.ended, pr.first.Close())...)
}

// sameClient says what differs between the hellos of two processes of
// one stack: each server instance's client must be the same client.
func sameClient(first, next agents.Hello) error {
	f, n := first, next
	f.PID, n.PID = 0, 0
	fb, _ := json.Marshal(f)
	nb, _ := json.Marshal(n)
	if string(fb) != string(nb) {
		return fmt.Errorf("a fresh process of the agent (%s) says it is another client than the stack's first (%s): each server instance's client must be the same", next, first)
	}
	return nil
}

// localMeter reads the CPU time of a's process tree.
func localMeter(what string) func(a *agents.Agent) (cpustat.Meter, int) {
	return func(a *agents.Agent) (cpustat.Meter, int) {
		return cpustat.NewTree(a.PID(), what+"'s process tree"), a.PID()
	}
}

// goAgentArgs are the arguments of dbsock's own agent for target t: its
// settings (no endpoint, no password) and the run's value size.
func (p Plan) goAgentArgs(t *targets.Target) ([]string, error) {
	settings, err := json.Marshal(p.settings(t))
	if err != nil {
		return nil, fmt.Errorf("%s: write its settings for dbsock's agent: %w", t.Name, err)
	}
	args := []string{"agent", "--settings", string(settings)}
	if sizes := p.valueSizes(); len(sizes) == 1 && sizes[0] > 0 {
		args = append(args, "--value-size", strconv.Itoa(sizes[0]))
	}
	return append(args, t.Name), nil
}

// goProcess says whether the Go stack's client of target t runs as
// dbsock's own agent in a process of its own on this host
// (ClientSide.GoAgent), and if not, why ("" when it does, or when the run
// asked for it in this process).
func (p Plan) goProcess(t *targets.Target) (bool, string) {
	if p.Client.GoAgent == "" || p.Client.Remote != nil {
		return false, ""
	}
	d := p.settings(t).Driver(drivers.Workload{Rows: p.Workload.Rows})
	_, named := d.(drivers.NamedOpener)
	_, op := d.(drivers.AgentOp)
	if _, finds := d.(drivers.ConnFinder); !named || !op || !finds {
		return false, "dbsock's agent measures a target whose server shows each connection by a token, which " + t.Name + "'s does not"
	}
	if slices.ContainsFunc(p.paths(), func(t drivers.Transport) bool { return t.Info().TLS }) {
		return false, "the TLS session each connection negotiated is read on the connection itself"
	}
	if slices.Contains(p.scenarios(), scenarios.Connect) {
		return false, "the connect scenario's phases (the connect and the lookup) are timed in dbsock's own loop"
	}
	why := ""
	_ = p.agentRefusal(func(format string, args ...any) error {
		why = fmt.Sprintf(format, args...)
		return errors.New(why)
	})
	if len(p.valueSizes()) > 1 {
		why = "its agent checks one value size a process"
	}
	return why == "", why
}

// goLocalAgent starts dbsock's own agent for t on this host: the Go
// stack's client in a process of its own, started afresh for each server
// instance.
func (p Plan) goLocalAgent(ctx context.Context, t *targets.Target) (stackClient, error) {
	args, err := p.goAgentArgs(t)
	if err != nil {
		return stackClient{}, err
	}
	spec := agents.Spec{Stack: "go", Argv: append([]string{p.Client.GoAgent}, args...)}
	limits := agents.Limits{OpTimeout: p.Loop.Timeout(), PerOp: time.Millisecond}
	start := func(ctx context.Context) (*agents.Agent, error) { return agents.Start(ctx, spec, limits) }
	a, err := start(ctx)
	if err != nil {
		return stackClient{}, err
	}
	h := a.Hello()
	client := &results.Client{Language: GoClient, RuntimeVersion: "go" + h.RuntimeVersion, Library: h.Library, LibraryVersion: h.LibraryVersion}
	if c := h.Capabilities; c != nil && p.atLoad() {
		client.Workers = c.Workers
	}
	sc := stackClient{agent: a, client: client, procs: &procs{first: a, spawn: start, cpu: localMeter("dbsock's agent")}}
	if client.TimingOverheadNs, err = timingOverhead(ctx, a); err != nil {
		return sc, errors.Join(err, a.Close())
	}
	fmt.Fprintf(p.log(), "dbsock: %s: dbsock's agent (%s), a process per server instance, pid %d%s, %d ns per op to time it\n",
		t.Name, h, a.PID(), agentCPUs(a.PID()), client.TimingOverheadNs)
	return sc, nil
}
