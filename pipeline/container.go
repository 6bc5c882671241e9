package pipeline

// The client elsewhere: with a Plan.Client.Remote (dbsock run --client
// container) each target's Go stack is dbsock's own agent (dbsock agent,
// package agents/goagent) running in a client container beside the
// server, spoken to over the agent protocol like every other stack's
// agent: the same loop (scenarios.Run, its ops timed by the agent), the
// same verification of each connection on the server side and the same
// audit of each block. Only the process, and so the client's cgroup,
// mount namespace and pinning, change.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/visible"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// Remote is a place outside this process where dbsock's own agent runs.
type Remote interface {
	// AgentArgv is the command line, on this host, of an agent that runs
	// dbsock with args there (its stdin and stdout those of the process
	// this host starts).
	AgentArgv(args ...string) []string
	// AgentPID is the process, as this host numbers it, that runs there
	// as pid (as the agent's hello says it, in its own PID namespace):
	// the agent whose CPU time is the client's.
	AgentPID(pid int) (int, error)
	// Place says where that is, for the report.
	Place() string
	// PID is its first process as this host sees it (0: unknown).
	PID() int
	Stop(ctx context.Context) error
}

// StartRemote starts a Remote for target that reaches the host
// directories dirs at the same paths.
type StartRemote func(ctx context.Context, target string, dirs []string) (Remote, error)

// remoteClient is one target's client outside this process.
type remoteClient struct {
	r Remote
}

// startClient starts t's remote client beside srv, and records its place
// in ti.
func (p Plan) startClient(ctx context.Context, t *targets.Target, srv *supply.Server, ti *results.Target) (*remoteClient, error) {
	var dirs []string
	if a := srv.Unix().Address; a != "" {
		dirs = append(dirs, filepath.Dir(a))
	}
	r, err := p.Client.Remote(ctx, t.Name, dirs)
	if err != nil {
		return nil, err
	}
	ti.Client = r.Place()
	if pids, _ := meterRoots(srv.CPU); len(pids) > 0 && r.PID() > 0 {
		ti.Provenance.CPUGroup = supply.CgroupNote(pids[0], r.PID())
	}
	fmt.Fprintf(p.log(), "dbsock: %s: the client runs in %s\n", t.Name, ti.Client)
	return &remoteClient{r: r}, nil
}

func (c *remoteClient) stop() error {
	if c == nil {
		return nil
	}
	return c.r.Stop(context.Background())
}

// goAgent starts dbsock's own agent for t in rc, with t's settings and
// the run's value size: the Go stack's client there, its CPU time that
// of the agent's process in rc, started afresh (an exec of its own) for
// each server instance.
func (p Plan) goAgent(ctx context.Context, t *targets.Target, rc *remoteClient) (stackClient, error) {
	args, err := p.goAgentArgs(t)
	if err != nil {
		return stackClient{}, err
	}
	spec := agents.Spec{Stack: "go (in the client container)", Argv: rc.r.AgentArgv(args...)}
	limits := agents.Limits{OpTimeout: p.Loop.Timeout(), PerOp: time.Millisecond}
	// pids are the agents' processes as this host numbers them: their
	// CPU time is the client's, not that of the exec dbsock started here.
	pids := map[*agents.Agent]int{}
	start := func(ctx context.Context) (*agents.Agent, error) {
		a, err := agents.Start(ctx, spec, limits)
		if err != nil {
			return nil, err
		}
		pid, err := rc.r.AgentPID(a.Hello().PID)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: dbsock's agent in %s: %w", t.Name, rc.r.Place(), err), a.Close())
		}
		pids[a] = pid
		return a, nil
	}
	a, err := start(ctx)
	if err != nil {
		return stackClient{}, err
	}
	h, pid := a.Hello(), pids[a]
	if p.atLoad() {
		if err := h.CanLoad(p.maxConcurrency(), p.Loop.Rate > 0 || len(p.Sweep.Rates) > 0 || p.RateAuto); err != nil {
			return stackClient{}, errors.Join(fmt.Errorf("%s: dbsock's agent in the client container (%s) cannot run this load: %w", t.Name, h, err), a.Close())
		}
	}
	client := &results.Client{Language: GoClient, RuntimeVersion: "go" + h.RuntimeVersion, Library: h.Library, LibraryVersion: h.LibraryVersion}
	if c := h.Capabilities; c != nil && p.atLoad() {
		client.Workers = c.Workers
	}
	remote := func(a *agents.Agent) (cpustat.Meter, int) {
		pid := pids[a]
		return cpustat.NewTree(pid, "dbsock's agent in the client container (pid "+strconv.Itoa(pid)+")'s process tree"), pid
	}
	sc := stackClient{agent: a, client: client, procs: &procs{first: a, spawn: start, cpu: remote}}
	if client.TimingOverheadNs, err = timingOverhead(ctx, a); err != nil {
		return sc, errors.Join(err, a.Close())
	}
	fmt.Fprintf(p.log(), "dbsock: %s: dbsock's agent (%s) in the client container, pid %d (%d in the container)%s, %d ns per op to time it\n",
		t.Name, visible.Line(h.String()), pid, h.PID, agentCPUs(pid), client.TimingOverheadNs)
	return sc, nil
}

// meterRoots are the roots of m's process trees and what they are.
func meterRoots(m cpustat.Meter) ([]int, string) {
	switch m := m.(type) {
	case *cpustat.Tree:
		return []int{m.Root}, m.What
	case cpustat.Sum:
		var pids []int
		what := ""
		for _, one := range m {
			p, w := meterRoots(one)
			if len(p) == 0 {
				return nil, ""
			}
			pids, what = append(pids, p...), w
		}
		return pids, what
	}
	return nil, ""
}
