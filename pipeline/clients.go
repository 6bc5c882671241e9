package pipeline

// Client stacks (Plan.Client.Stacks): each target measured from Go's drivers in
// dbsock and from agents in other languages (package agents), each
// (target, stack) a case of its own over the same paths, keys, rounds and
// server instances. The agent only does and times the ops; dbsock opens
// nothing of its own on the measured paths but the connection through
// which it verifies each of the agent's on the server side.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/internal/visible"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// GoClient is the client stack of Go's drivers in dbsock itself.
const GoClient = "go"

// CmdClient is the stack of a user's own agent: cmd:COMMAND in
// Plan.Client.Stacks runs COMMAND with the target's name as its last
// argument (agents.Command). Reports and thresholds name it cmd; a run
// with several names the second cmd2, the third cmd3 (StackName).
const CmdClient = "cmd"

// ClientStacks are the stacks Plan.Client.Stacks may name, in a report's
// order: Go's, and those of the agents directory (agents.Dir: the stacks
// in dbsock's binary, or $DBSOCK_AGENTS_DIR's).
func ClientStacks() []string { return clientStacks("") }

// clientStacks are Go's and the stacks of the agents directory dir
// ("" for agents.Dir's).
func clientStacks(dir string) []string {
	stacks, _ := agents.Stacks(dir) // an agents directory that cannot be read is said when a stack of it is asked for
	return append([]string{GoClient}, stacks...)
}

// MaxCommand is the longest command of a cmd: client stack.
const MaxCommand = 4096

// agentPaths are the paths an agent can be given (PathInfo.Agent): it
// dials 127.0.0.1, [::1] or the socket itself, from this host.
func agentPaths() []drivers.Transport {
	var paths []drivers.Transport
	for _, p := range drivers.PathTable {
		if p.Agent {
			paths = append(paths, p.Path)
		}
	}
	return paths
}

var libraryName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// StackName is the name reports and thresholds give client stack c of
// stacks (Plan.Client.Stacks): c itself, but cmd, cmd2, cmd3... for the
// first, second, third cmd:COMMAND among stacks.
func StackName(stacks []string, c string) string {
	if !strings.HasPrefix(c, CmdClient+":") {
		return c
	}
	n := 0
	for _, s := range stacks {
		if strings.HasPrefix(s, CmdClient+":") {
			n++
		}
		if s == c {
			break
		}
	}
	if n <= 1 {
		return CmdClient
	}
	return fmt.Sprintf("%s%d", CmdClient, n)
}

// stackNames are the names of the run's client stacks (StackName).
func (p Plan) stackNames() []string {
	var out []string
	for _, c := range p.clients() {
		out = append(out, StackName(p.clients(), c))
	}
	return out
}

// clients are the stacks each target is measured from.
func (p Plan) clients() []string {
	if len(p.Client.Stacks) == 0 {
		return []string{GoClient}
	}
	return p.Client.Stacks
}

// agentStacks says whether any stack but Go's is asked for.
func (p Plan) agentStacks() bool {
	return slices.ContainsFunc(p.clients(), func(c string) bool { return c != GoClient })
}

// validateClients checks each client stack's name, and what a run with
// agents cannot do (yet): agents measure one connection per path, the
// closed-loop lookup of each target's own row, from this host.
func (p Plan) validateClients() error {
	if err := p.validateRemote(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, c := range p.Client.Stacks {
		lang, lib, hasLib := strings.Cut(c, ":")
		switch {
		case seen[c]:
			return setting.Err("%s names %s twice", setting.Clients, c)
		case lang == CmdClient && (strings.TrimSpace(lib) == "" || len(lib) > MaxCommand || strings.ContainsFunc(lib, unicode.IsControl)):
			return setting.Err("%s %q: give your agent's command after cmd: on one line, at most %d bytes, such as cmd:'/usr/bin/python3 agent.py' (dbsock adds the target's name as its last argument)",
				setting.Clients, c, MaxCommand)
		case lang == CmdClient:
			if _, err := agents.Command(lib, "TARGET"); err != nil {
				return setting.Err("%s %q cannot be run: %v (dbsock runs COMMAND with the target's name as its last argument)", setting.Clients, c, err)
			}
		case !slices.Contains(clientStacks(p.Client.AgentsDir), lang):
			if _, err := agents.Stacks(p.Client.AgentsDir); err != nil {
				return setting.Err("%s %q: %v", setting.Clients, c, err)
			}
			return setting.Err("%s %q is not a client stack; give some of %s, or cmd:COMMAND for your own agent (a library after a colon where a stack has several, such as STACK:LIBRARY)",
				setting.Clients, c, strings.Join(clientStacks(p.Client.AgentsDir), ", "))
		case lang == GoClient && hasLib:
			return setting.Err("%s %q: the go stack's library is each target's own driver; give go alone", setting.Clients, c)
		case hasLib && !libraryName.MatchString(lib) && !strings.Contains(lib, ":"):
			return setting.Err("%s %q: %q is not a library's name (lower-case letters, digits, - and _)", setting.Clients, c, lib)
		case hasLib:
			if err := p.checkStackWords(c); err != nil {
				return err
			}
		}
		seen[c] = true
	}
	if !p.agentStacks() {
		return nil
	}
	return p.validateAgentRun()
}

// validateAgentRun refuses what agents cannot do: a stack whose agent
// runs no load (its stack.json names no worker model) is refused many
// connections, a rate or a duration; a user's agent says what it can do
// in its hello, when it starts (checkLoad).
func (p Plan) validateAgentRun() error {
	asked := strings.Join(p.Client.Stacks, ",")
	refuse := func(format string, args ...any) error {
		return setting.Err("%s %s: "+format, append([]any{setting.Clients, asked}, args...)...)
	}
	if p.Client.Remote != nil {
		return refuse("its agents run on this host, which %s does not combine with", setting.Client)
	}
	if err := p.agentRefusal(refuse); err != nil {
		return err
	}
	if slices.Contains(p.scenarios(), scenarios.Connect) {
		for _, c := range p.Client.Stacks {
			lang, _, model := p.splitStack(c)
			if lang != GoClient && lang != CmdClient && !agents.Declared(p.Client.AgentsDir, lang).Connect {
				return refuse("the %s agent measures lookups on open connections only (its stack.json does not say connect): give %s %s for it",
					lang, setting.Scenario, scenarios.PK)
			}
			if why := agents.ModelNoConnect(p.Client.AgentsDir, lang, model); why != "" {
				return refuse("%s: %s, or give %s %s for it", c, why, setting.Scenario, scenarios.PK)
			}
		}
	}
	if p.atLoad() {
		for _, c := range p.Client.Stacks {
			lang, _, _ := strings.Cut(c, ":")
			if lang != GoClient && lang != CmdClient && agents.Declared(p.Client.AgentsDir, lang).DefaultModel() == "" {
				return refuse("the %s agent measures one connection at a time, closed loop (its stack.json names no workers): give %s 1 and leave out %s and %s for it",
					lang, setting.Concurrency, setting.Rate, setting.Duration)
			}
		}
	}
	return nil
}

// validateRemote refuses, with a remote client (--client container),
// what dbsock's own agent there cannot do: it is an agent, which looks
// up each target's own rows (on open connections, or each on one of its
// own: the connect scenario), on the paths it dials itself from the
// container's host network, one value size a run.
func (p Plan) validateRemote() error {
	if p.Client.Remote == nil {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return setting.Err("%s %s: the client container measures through dbsock's own agent, and "+format, append([]any{setting.Client, p.clientName()}, args...)...)
	}
	if len(p.Sweep.ValueSizes) > 1 {
		return refuse("its driver checks one value size a run: give %s one size", setting.ValueSizes)
	}
	return p.agentRefusal(refuse)
}

// agentRefusal is what an agent cannot be asked for, refused with refuse:
// pipelining, writes, your own query or keys,
// a path it does not dial itself (the service and pod paths are dialed
// from inside another container's network namespace, and dbsock
// verifies each of an agent's connections over its own connection on the
// same path, from this host).
func (p Plan) agentRefusal(refuse func(format string, args ...any) error) error {
	o := p.Loop
	switch {
	case slices.ContainsFunc(p.Sweep.Pipelines, func(d int) bool { return d > 1 }):
		return refuse("an agent sends one lookup per op: leave out %s", setting.Pipelines)
	case o.Op != "" && o.Op != drivers.OpRead:
		return refuse("an agent reads: leave out %s %s", setting.Op, o.Op)
	case len(p.Workload.Queries) > 0 || len(p.Workload.KeysFrom) > 0:
		return refuse("an agent does each target's own lookup: leave out %s and %s", setting.Queries, setting.KeysFrom)
	}
	for _, t := range p.paths() {
		if !t.Route().Info().Agent { // a control as the path it repeats
			return refuse("an agent dials %s itself, not path %s: leave %s out of %s", pathNames(agentPaths()), t, t, setting.Paths)
		}
	}
	return nil
}

// atLoad says whether the run's cases are at load, which an agent runs
// as a load request (agent protocol 2): more than one connection, an
// offered rate or a duration.
func (p Plan) atLoad() bool {
	return slices.ContainsFunc(p.Sweep.Concurrency, func(c int) bool { return c > 1 }) ||
		p.Loop.Rate > 0 || p.Loop.Duration > 0 || len(p.Sweep.Rates) > 0 || p.RateAuto
}

// maxConcurrency is the most connections a case of the run has per path.
func (p Plan) maxConcurrency() int {
	return max(slices.Max(append([]int{1}, p.Sweep.Concurrency...)), 1)
}

func pathNames(ts []drivers.Transport) string {
	var s []string
	for _, t := range ts {
		s = append(s, string(t))
	}
	return strings.Join(s, ", ")
}

// validateMeasurable refuses a run in which no (target, stack) can be
// measured: each other one is a skip the report names.
func (p Plan) validateMeasurable() error {
	if !p.agentStacks() || len(p.Targets) == 0 {
		return nil
	}
	var why []string
	for _, t := range p.Targets {
		for _, c := range p.clients() {
			r := p.skipReason(t, c)
			if r == "" {
				return nil
			}
			why = append(why, t.Name+" from "+StackName(p.clients(), c)+": "+r)
		}
	}
	return setting.Err("%s %s: nothing to measure (%s)", setting.Clients, strings.Join(p.Client.Stacks, ","), strings.Join(why, "; "))
}

// skipReason says why target t is not measured from client stack c, or
// "" when it is.
func (p Plan) skipReason(t *targets.Target, c string) string {
	lang, lib, model := p.splitStack(c)
	if lang == GoClient {
		return ""
	}
	d := p.settings(t).Driver(drivers.Workload{Rows: p.Workload.Rows})
	if _, ok := d.(drivers.ConnFinder); !ok {
		return "no agent measures " + t.Name + ": dbsock cannot list another process's connections on its server, so it could not verify an agent's route there"
	}
	op, ok := d.(drivers.AgentOp)
	if !ok {
		return "no agent does " + t.Name + "'s op"
	}
	if lang == CmdClient {
		return "" // the user's agent: what it can do, it says when it is asked
	}
	family := op.AgentOp().Family
	l, err := agents.Library(p.Client.AgentsDir, lang, t.Name, family, lib)
	if err != nil {
		return err.Error()
	}
	if why := agents.ModelMissing(p.Client.AgentsDir, lang, model, l); why != "" {
		return "its " + model + " model does not run " + l + ": " + why
	}
	if why := agents.NoTLS(p.Client.AgentsDir, lang, family, t.Agents); why != "" && p.baseline().Info().TLS {
		return "its baseline, tls, is not measured from it: " + why
	}
	if why := agents.NoConnect(p.Client.AgentsDir, lang, family); why != "" && slices.Contains(p.scenarios(), scenarios.Connect) {
		return "the connect scenario is not timed from it: " + why
	}
	if _, err := p.agentSpec(c, t); err != nil {
		return err.Error()
	}
	return ""
}

// agentSpec is the Spec of client stack c's agent for t: a stack's is
// started with the protocol family of t's driver, the user's own (cmd:)
// with t's name.
func (p Plan) agentSpec(c string, t *targets.Target) (agents.Spec, error) {
	lang, lib, model := p.splitStack(c)
	if lang == CmdClient {
		return agents.Command(lib, t.AgentName()) // a hop's: the server's name, whose protocol it speaks
	}
	return agents.ForModel(p.Client.AgentsDir, lang, t.Name, p.family(t), lib, model)
}

// splitStack reads client stack c: its stack, its library ("" for each
// target's default; a cmd: stack's command) and its worker model ("" for
// its default: agents.SplitStack).
func (p Plan) splitStack(c string) (lang, lib, model string) {
	if lang, cmd, _ := strings.Cut(c, ":"); lang == CmdClient {
		return lang, cmd, ""
	}
	return agents.SplitStack(p.Client.AgentsDir, c)
}

// checkStackWords refuses a stack whose words after its name are not a
// library of it and a worker model it declares, naming those it has.
func (p Plan) checkStackWords(c string) error {
	lang, lib, model := p.splitStack(c)
	d := agents.Declared(p.Client.AgentsDir, lang)
	if _, ok := d.Libraries[lib]; lib == "" || ok {
		return nil
	}
	_, err := agents.Model(p.Client.AgentsDir, lang, lib)
	libs := slices.Sorted(maps.Keys(d.Libraries))
	if model != "" || err == nil {
		return setting.Err("%s %q: the %s stack has no library %q (it has %s)", setting.Clients, c, lang, lib, strings.Join(libs, ", "))
	}
	return setting.Err("%s %q: the %s stack has no library or worker model %q: %v; its libraries are %s", setting.Clients, c, lang, lib,
		strings.TrimPrefix(err.Error(), fmt.Sprintf("the %s stack has no worker model %q: ", lang, lib)), strings.Join(libs, ", "))
}

// family is the protocol family of t's driver, as an agent speaks it
// (drivers.AgentLookup.Family), or "" when no agent does its op.
func (p Plan) family(t *targets.Target) string {
	if op, ok := p.settings(t).Driver(drivers.Workload{Rows: p.Workload.Rows}).(drivers.AgentOp); ok {
		return op.AgentOp().Family
	}
	return ""
}

// stackClient is one client stack a target is measured from: Go's drivers
// in this process (agent nil) or an agent, started afresh for each server
// instance (procs: process.go).
type stackClient struct {
	name   string // its StackName; "" for Go
	agent  *agents.Agent
	procs  *procs
	client *results.Client
	noTLS  bool // the agent is not measured on the tls path (agents.NoTLS)
}

// paths are the paths c measures of paths: all but tls where its agent
// has none.
func (c stackClient) paths(paths drivers.Paths) drivers.Paths {
	if !c.noTLS {
		return paths
	}
	var out drivers.Paths
	for _, ep := range paths {
		if !ep.Transport.Info().TLS {
			out = append(out, ep)
		}
	}
	return out
}

// startClients starts t's agents, one per stack that has a library for
// t and is installed (the others are recorded in ti as skipped), and, with
// a remote client rc, dbsock's own agent there as the Go stack; stop ends
// them.
func (p Plan) startClients(ctx context.Context, t *targets.Target, ti *results.Target, rc *remoteClient) (cs []stackClient, stop func() error, err error) {
	stop = func() error {
		var errs []error
		for _, c := range cs {
			if c.procs != nil {
				errs = append(errs, c.procs.stop())
			} else if c.agent != nil {
				errs = append(errs, c.agent.Close())
			}
		}
		return errors.Join(errs...)
	}
	for _, c := range p.clients() {
		var sc stackClient
		var skip bool
		if c == GoClient {
			sc, err = p.goStack(ctx, t, rc)
		} else {
			sc, skip, err = p.stackAgent(ctx, t, ti, c)
		}
		if !skip && (sc.agent != nil || err == nil) {
			cs = append(cs, sc) // an agent started is stopped with the others
		}
		if err != nil {
			return cs, stop, err
		}
	}
	return cs, stop, nil
}

// goStack is the Go stack's client of t: dbsock's own agent in the client
// container (rc), or in a process of its own here, or (stackClient{}) the
// loop in dbsock's own process, said with why.
func (p Plan) goStack(ctx context.Context, t *targets.Target, rc *remoteClient) (stackClient, error) {
	if rc != nil {
		return p.goAgent(ctx, t, rc)
	}
	if local, why := p.goProcess(t); local {
		return p.goLocalAgent(ctx, t)
	} else if why != "" {
		fmt.Fprintf(p.log(), "dbsock: %s: Go's client runs in dbsock's own process, one process for every server instance: %s\n", t.Name, why)
	}
	return stackClient{}, nil
}

// stackAgent starts stack c's agent for t, or says in ti why c does not
// measure t (skip); an agent it started comes back with its error too.
func (p Plan) stackAgent(ctx context.Context, t *targets.Target, ti *results.Target, c string) (sc stackClient, skip bool, err error) {
	name := StackName(p.clients(), c)
	if why := p.skipReason(t, c); why != "" {
		ti.Skipped = append(ti.Skipped, results.SkippedClient{Stack: name, Reason: why})
		fmt.Fprintf(p.log(), "dbsock: %s: not measured from %s: %s\n", t.Name, name, why)
		return stackClient{}, true, nil
	}
	lang, _, _ := strings.Cut(c, ":")
	spec, err := p.agentSpec(c, t)
	if err != nil {
		return stackClient{}, false, err
	}
	spec.Stack = name
	limits := agents.Limits{OpTimeout: p.Loop.Timeout(), PerOp: time.Millisecond}
	start := func(ctx context.Context) (*agents.Agent, error) { return agents.Start(ctx, spec, limits) }
	a, err := start(ctx)
	if err != nil {
		return stackClient{}, false, err
	}
	h := a.Hello()
	if p.atLoad() {
		if err := h.CanLoad(p.maxConcurrency(), p.Loop.Rate > 0 || len(p.Sweep.Rates) > 0 || p.RateAuto); err != nil {
			a.Close()
			return stackClient{}, false, setting.Err("%s %s: the %s agent (%s) cannot run this load: %v", setting.Clients, c, name, h, err)
		}
	}
	declared := agents.Declared(p.Client.AgentsDir, lang)
	client := &results.Client{Language: h.Language, RuntimeVersion: h.RuntimeVersion, Library: h.Library, LibraryVersion: h.LibraryVersion,
		TimingGoalNs: declared.TimingGoalNs, FloorReference: declared.FloorReference}
	if c := h.Capabilities; c != nil && p.atLoad() {
		client.Workers = c.Workers
	}
	if lang == CmdClient { // your agent, in the language its hello names
		client.Language, client.RuntimeVersion = CmdClient, strings.TrimSpace(h.Language+" "+h.RuntimeVersion)
	}
	sc = stackClient{name: name, agent: a, client: client, procs: &procs{first: a, spawn: start, cpu: localMeter("the " + name + " agent")}}
	p.tlsOf(&sc, t, ti, lang, h)
	if client.TimingOverheadNs, err = timingOverhead(ctx, a); err != nil {
		return sc, false, err
	}
	// The hello is the agent's own words: shown as text, as error
	// lines are.
	fmt.Fprintf(p.log(), "dbsock: %s: the %s agent (%s), pid %d%s, %d ns per op to time it\n", t.Name, name, visible.Line(h.String()), a.PID(), agentCPUs(a.PID()), client.TimingOverheadNs)
	return sc, false, nil
}

// tlsOf marks sc as not measuring the tls path, with a warning in ti,
// where its stack declares no TLS for t or its hello says its library has
// none (Ruby's hiredis beside redis-rb's own driver).
func (p Plan) tlsOf(sc *stackClient, t *targets.Target, ti *results.Target, lang string, h agents.Hello) {
	why := agents.NoTLS(p.Client.AgentsDir, lang, p.family(t), t.Agents)
	if c := h.Capabilities; why == "" && lang != CmdClient && h.Protocol >= 2 && c != nil && !c.TLS {
		why = h.Library + " has no TLS (its agent's hello says so)"
	}
	if why != "" && slices.ContainsFunc(p.paths(), func(t drivers.Transport) bool { return t.Info().TLS }) {
		sc.noTLS = true
		ti.Warnings = append(ti.Warnings, results.Warn(results.StackWithoutTLS, "%s from %s is not measured on the tls path: %s.", t.Name, sc.name, why))
	}
}

// overheadOps is how many empty ops measure an agent's own cost of timing
// an op.
const overheadOps = 10_000

// timingOverhead is the p50 of overheadOps empty ops timed by a as it
// times an op.
func timingOverhead(ctx context.Context, a *agents.Agent) (int64, error) {
	ns, err := a.Overhead(ctx, overheadOps)
	if err != nil {
		return 0, err
	}
	slices.Sort(ns)
	return ns[len(ns)/2], nil
}

// agentCPUs says where the agent process may run: it inherits the
// client's pinning (Plan.Placement.Client) from dbsock.
func agentCPUs(pid int) string {
	cpus, err := placement.Affinity(pid)
	if err != nil {
		return ""
	}
	return ", on CPUs " + placement.FormatList(cpus)
}

// agentLoop is the loop for a stack's agent: scenarios.Run with settings
// s and d's ops done by the agent, its CPU the agent's process's, each run
// marked with the stack.
func agentLoop(c stackClient, d drivers.Driver, srv *supply.Server, paths drivers.Paths, info drivers.ServerInfo, s scenarios.Settings) (caseLoop, error) {
	if _, err := agents.NewDriver(d, c.agent); err != nil {
		return nil, err
	}
	paths = c.paths(paths)
	return func(ctx context.Context, cs scenarios.Case, in scenarios.Instance, emit func(results.Run)) (err error) {
		a, done, err := c.procs.next(ctx)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := done(); err == nil {
				err = cerr
			}
		}()
		ad, err := agents.NewDriver(d, a)
		if err != nil {
			return err
		}
		if srv.Provider == (&supply.External{}).Name() {
			ad.SharedServer() // others may use your server: its counts bound the agent's from below only
		}
		in.ClientCPU, _ = c.procs.cpu(a)
		return scenarios.Run(ctx, ad.Timed(), srv.Current(paths), info, s, cs, in, func(run results.Run) {
			client := *c.client
			client.Audit = ad.Counted()
			client.FreshProcess = c.procs.spawn != nil
			run.Stack, run.Client = c.name, &client
			emit(run)
		})
	}, nil
}

// fillGoClients names Go's client stack on every run it did: the Go
// release and the target's driver module with its version, as the
// report's environment names them.
func fillGoClients(rep *results.Report) {
	for i := range rep.Runs {
		run := &rep.Runs[i]
		if run.Stack != "" || run.Client != nil {
			continue
		}
		c := &results.Client{Language: GoClient, RuntimeVersion: rep.Environment.GoVersion}
		if t, ok := targets.Lookup(run.Target); ok && t.Library != "" {
			c.Library, c.LibraryVersion = t.Library, rep.Environment.Drivers[t.Library]
		}
		if len(rep.Config.Clients) > 0 && (run.Case.Concurrency > 1 || run.Case.Rate > 0) {
			c.Workers = "goroutines" // named beside the other stacks' models
		}
		run.Client = c
	}
}

// warnUnaudited says, once per stack, which agents' latencies are their
// own word: the server kept no count of their lookups that dbsock reads.
func warnUnaudited(ti *results.Target, runs []results.Run) {
	said := map[string]bool{}
	for _, r := range runs {
		if r.Stack == "" || r.Client == nil || r.Client.Audit != "" || said[r.Stack] {
			continue
		}
		said[r.Stack] = true
		ti.Warnings = append(ti.Warnings, results.Warn(results.AgentsWord,
			"%s from %s: the server keeps no count of the lookups that dbsock can read, so these latencies are the agent's own word, checked against dbsock's clock only (their sum within each block's wall time, none under %s).",
			ti.Name, r.Stack, agents.MinRoundTrip))
	}
}
