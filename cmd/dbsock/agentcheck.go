package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// checkRows are the rows each server of dbsock agent-check is seeded with.
const checkRows = 100

func newAgentCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var stacks []string
	cmd := &cobra.Command{
		Use:   "agent-check --clients cmd:'COMMAND' [TARGET...]",
		Short: "Check an agent against the agent protocol on real local servers, one line per check",
		Long: `dbsock agent-check runs the agents' conformance suite (docs/agents.md,
"Checking an agent") on your agent, or on a stack of dbsock's: it starts
a private local server of each target (as --provider local does), seeds
it, starts the agent with the target's name as its last argument, and
prints each check's result on a line of its own: PASS, FAIL with what
the agent did, or SKIP with why the check does not apply.

Without targets, a stack is checked on every target its stack.json
claims, and your agent on every target whose protocol family its hello
names (protocol 2; an agent of protocol 1 is given its targets).

Exit status: 0 when no check failed, 1 when one did, 2 on bad input.`,
		Example: `  dbsock agent-check --clients cmd:'/usr/bin/python3 agent.py' redis
  dbsock agent-check --clients python postgres mysql`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return agentCheck(cmd.Context(), stacks, args, stdout, stderr)
		},
	}
	cmd.Flags().Var(&clientsValue{stacks: &stacks}, "clients",
		"the agent to check: cmd:'COMMAND' for your own, which takes the rest of the value, commas and all, or a stack of dbsock's ("+strings.Join(pipeline.ClientStacks()[1:], ", ")+
			"), STACK:LIBRARY for one of its libraries, STACK:MODEL for one of its worker models (c:eventloop); several separated by commas; repeatable")
	return cmd
}

// checkJob is one agent to check on one target.
type checkJob struct {
	client, name string // as --clients gives it, and as results name it
	target       *targets.Target
}

// agentCheck checks each agent of clients on each of names (their
// targets when none), and prints a line per check to stdout.
func agentCheck(ctx context.Context, clients, names []string, stdout, stderr io.Writer) error {
	dir, err := agents.Dir()
	if err != nil {
		return usagef("%v", err)
	}
	if len(clients) == 0 {
		return usagef("give the agent to check: --clients cmd:'COMMAND' for your own (dbsock adds the target's name as its last argument), or a stack of dbsock's (%s)",
			strings.Join(pipeline.ClientStacks()[1:], ", "))
	}
	ts, err := checkTargets(names)
	if err != nil {
		return err
	}
	var jobs []checkJob
	for _, c := range clients {
		js, err := checkJobs(ctx, dir, clients, c, ts)
		if err != nil {
			return err
		}
		jobs = append(jobs, js...)
	}
	servers, stop, err := checkServers(ctx, jobs, stderr)
	defer stop()
	if err != nil {
		return err
	}
	failed, passed, skipped := 0, 0, 0
	for _, j := range jobs {
		sub, err := checkSubject(dir, j, servers[j.target.Name])
		if err != nil {
			return fmt.Errorf("check %s from %s: %w", j.target.Name, j.name, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("agent-check stopped: %w", context.Cause(ctx))
		}
		for _, r := range agents.Conform(ctx, sub) {
			fmt.Fprintln(stdout, r.Line())
			switch r.Status() {
			case "FAIL":
				failed++
			case "SKIP":
				skipped++
			default:
				passed++
			}
		}
	}
	fmt.Fprintf(stderr, "dbsock: agent-check: %d passed, %d failed, %d not run\n", passed, failed, skipped)
	if failed > 0 {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%d of the agent's checks failed (their FAIL lines say what it did; docs/agents.md, \"Checking an agent\")", failed)}
	}
	return ctx.Err()
}

// checkTargets are the targets names, each one an agent can be checked
// on (its driver finds another process's connections and says its
// lookup in an agent's form).
func checkTargets(names []string) ([]*targets.Target, error) {
	var out []*targets.Target
	for _, n := range names {
		t, ok := targets.Lookup(n)
		if !ok {
			return nil, usagef("%s (dbsock targets lists them)", unknownWord("target", n, agentTargetNames()))
		}
		if !agentTarget(t) {
			return nil, usagef("no agent is checked on %s: dbsock cannot find another process's connection on its server, so it could not verify an agent's route there (agents are checked on %s)",
				n, strings.Join(agentTargetNames(), ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// agentTarget says whether an agent can be checked on t: not on a proxy
// whose agents are its server's (targets.Target.AgentsAs), which is
// checked on that server.
func agentTarget(t *targets.Target) bool {
	if t.AgentsAs != "" {
		return false
	}
	d := t.Settings().Driver(drivers.Workload{Rows: checkRows})
	_, finds := d.(drivers.ConnFinder)
	_, op := d.(drivers.AgentOp)
	return finds && op
}

func agentTargetNames() []string {
	var out []string
	for _, t := range targets.List() {
		if agentTarget(t) {
			out = append(out, t.Name)
		}
	}
	return out
}

// checkJobs are the targets of ts (those of c when ts is empty) that
// client c, one of clients, is checked on.
func checkJobs(ctx context.Context, dir string, clients []string, c string, ts []*targets.Target) ([]checkJob, error) {
	lang, lib, _ := strings.Cut(c, ":")
	model := ""
	if lang != pipeline.CmdClient {
		lang, lib, model = agents.SplitStack(dir, c)
	}
	name := pipeline.StackName(clients, c)
	if lang == pipeline.CmdClient {
		if _, err := agents.Command(lib, "TARGET"); err != nil {
			return nil, usagef("--clients %q cannot be run: %v (dbsock runs COMMAND with the target's name as its last argument)", c, err)
		}
		if len(ts) == 0 {
			var err error
			if ts, err = spokenTargets(ctx, c, lib); err != nil {
				return nil, err
			}
		}
	} else {
		named := len(ts) > 0
		if err := checkStack(dir, c, lang, lib, &ts); err != nil {
			return nil, err
		}
		kept, err := checkModel(dir, c, lang, lib, model, ts, named)
		if err != nil {
			return nil, err
		}
		ts = kept
	}
	var out []checkJob
	for _, t := range ts {
		out = append(out, checkJob{client: c, name: name, target: t})
	}
	return out, nil
}

// checkModel checks that worker model model of stack lang runs library
// lib (each target's default, where lib is "") on each target of ts,
// named by the user; of the targets its stack.json claims (named false),
// it keeps those the model runs.
func checkModel(dir, c, lang, lib, model string, ts []*targets.Target, named bool) ([]*targets.Target, error) {
	var out []*targets.Target
	for _, t := range ts {
		l, err := agents.Library(dir, lang, t.Name, familyOf(t), lib)
		if err != nil {
			return nil, usagef("--clients %q: %v", c, err)
		}
		why := agents.ModelMissing(dir, lang, model, l)
		if why != "" && named {
			return nil, usagef("--clients %q: its %s model does not run %s (%s): %s", c, model, l, t.Name, why)
		}
		if why == "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, usagef("--clients %q: its %s model runs none of the targets its stack.json claims", c, model)
	}
	return out, nil
}

// checkStack checks that stack lang (library lib, "" for each target's
// default) has a library for each target of ts, or fills ts with the
// targets its stack.json claims.
func checkStack(dir, c, lang, lib string, ts *[]*targets.Target) error {
	stacks, err := agents.Stacks(dir)
	if err != nil {
		return usagef("--clients %q: %v", c, err)
	}
	if lang == pipeline.GoClient {
		return usagef("--clients %q: Go's stack is dbsock's own drivers; its agent is checked as your own is, --clients cmd:'dbsock agent'", c)
	}
	if !slices.Contains(stacks, lang) {
		return usagef("--clients %q is not a client stack; give cmd:'COMMAND' for your own agent, or one of %s (a library after a colon, such as STACK:LIBRARY)", c, strings.Join(stacks, ", "))
	}
	if len(*ts) > 0 {
		for _, t := range *ts {
			if _, err := agents.Library(dir, lang, t.Name, familyOf(t), lib); err != nil {
				return usagef("--clients %q: %v", c, err)
			}
		}
		return nil
	}
	claims, err := agents.Claims(dir)
	if err != nil {
		return usagef("--clients %q: %v", c, err)
	}
	for _, cl := range claims {
		t, ok := targets.Lookup(cl.Target)
		if ok && cl.Stack == lang && (lib == "" || cl.Library == lib) && !slices.Contains(*ts, t) && agentTarget(t) {
			*ts = append(*ts, t)
		}
	}
	if len(*ts) == 0 {
		return usagef("--clients %q: the %s stack's stack.json claims no target with library %q", c, lang, lib)
	}
	return nil
}

// spokenTargets are the targets whose protocol family the hello of the
// user's agent c (COMMAND cmd) names: it is started once, for the first
// target an agent is checked on, to say its hello.
func spokenTargets(ctx context.Context, c, cmd string) ([]*targets.Target, error) {
	all := agentTargetNames()
	spec, err := agents.Command(cmd, all[0])
	if err != nil {
		return nil, usagef("--clients %q cannot be run: %v", c, err)
	}
	a, err := agents.Start(ctx, spec, agents.ConformLimits)
	if err != nil {
		return nil, fmt.Errorf("start your agent to read which targets its hello speaks (name the targets to check it on): %w", err)
	}
	h := a.Hello()
	_ = a.Close()
	if h.Protocol < 2 || h.Capabilities == nil {
		return nil, usagef("--clients %q: its hello speaks protocol %d, which does not say which targets it measures: name them, such as dbsock agent-check --clients cmd:'...' redis", c, h.Protocol)
	}
	var out []*targets.Target
	for _, n := range all {
		t, _ := targets.Lookup(n)
		if slices.Contains(h.Capabilities.Families, familyOf(t)) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, usagef("--clients %q: its hello speaks %s, the protocol family of none of dbsock's targets (%s)", c, strings.Join(h.Capabilities.Families, ", "), strings.Join(all, ", "))
	}
	return out, nil
}

// checkServer is a server the checks run on, and its driver.
type checkServer struct {
	srv    *supply.Server
	driver drivers.Driver
}

// checkServers starts and seeds a private local server of each target of
// jobs; stop stops them.
func checkServers(ctx context.Context, jobs []checkJob, stderr io.Writer) (map[string]checkServer, func(), error) {
	l := supply.NewLocal()
	out := map[string]checkServer{}
	stop := func() {
		for _, s := range out {
			_ = s.srv.Stop(context.Background())
		}
		_ = l.Close()
	}
	for _, j := range jobs {
		t := j.target
		if _, ok := out[t.Name]; ok {
			continue
		}
		fmt.Fprintf(stderr, "dbsock: agent-check: starting a local %s server\n", t.Name)
		srv, err := l.Supply(ctx, t.Supply())
		if err != nil {
			return out, stop, fmt.Errorf("start a local %s server to check the agent on: %w (scripts/install-deps.sh installs the servers)", t.Name, err)
		}
		d := t.Settings().Driver(drivers.Workload{Rows: checkRows})
		out[t.Name] = checkServer{srv: srv, driver: d}
		for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
			if err := d.Seed(ctx, ep); err != nil {
				return out, stop, fmt.Errorf("seed the local %s server over %s with %d rows: %w", t.Name, ep.Transport, checkRows, err)
			}
			if !srv.SeedEach && !t.SeedEach {
				break
			}
		}
	}
	return out, stop, nil
}

// checkSubject is job j's agent and server, as the suite takes them.
func checkSubject(dir string, j checkJob, s checkServer) (agents.Subject, error) {
	lang, lib, _ := strings.Cut(j.client, ":")
	model := ""
	if lang != pipeline.CmdClient {
		lang, lib, model = agents.SplitStack(dir, j.client)
	}
	sub := agents.Subject{Name: j.name, Target: j.target.Name, Driver: s.driver, Rows: checkRows, Server: s.srv,
		NoTLS: agents.NoTLS(dir, lang, familyOf(j.target), j.target.Agents)}
	var err error
	if lang == pipeline.CmdClient {
		sub.Spec, err = agents.Command(lib, j.target.Name)
		sub.Spec.Stack = j.name
		return sub, err
	}
	if sub.Spec, err = agents.ForModel(dir, lang, j.target.Name, familyOf(j.target), lib, model); err != nil {
		return sub, err
	}
	d := agents.Declared(dir, lang)
	sub.Declared, sub.Model = &d, model
	sub.NoConnect = cmp.Or(agents.NoConnect(dir, lang, familyOf(j.target)), agents.ModelNoConnect(dir, lang, model))
	return sub, nil
}

// familyOf is the protocol family of t's driver, as an agent speaks it
// (drivers.AgentLookup.Family), or "" when no agent does its op.
func familyOf(t *targets.Target) string {
	if op, ok := t.Settings().Driver(drivers.Workload{Rows: checkRows}).(drivers.AgentOp); ok {
		return op.AgentOp().Family
	}
	return ""
}
