package agents

// The conformance suite: the checks every agent must pass against a real
// server before dbsock measures anything with it (docs/agents.md,
// "Checking an agent"). It runs over a Subject, one agent and one target,
// whose server and driver the caller supplies (the targets are not this
// package's): dbsock's tests run it over every stack directory of
// agents/ and every target each stack.json claims, and dbsock agent-check
// over a user's agent.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbsock/dbsock/agents/stackfile"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/visible"
	"github.com/dbsock/dbsock/supply"
)

// Subject is one agent, and the target and server the suite checks it on.
type Subject struct {
	// Name names it in results: a stack ("python", "python:psycopg") or
	// "cmd" for a user's agent.
	Name string
	// Spec starts it; Spec.Stack names it in errors.
	Spec Spec
	// Target is dbsock's name of the target; Driver is its driver (a
	// drivers.ConnFinder and a drivers.AgentOp), whose Rows rows are
	// seeded on Server.
	Target string
	Driver drivers.Driver
	Rows   int
	Server *supply.Server
	// NoTLS says why the tls path is not checked (its stack.json's
	// no_tls, or the target's Support); "" checks it where the server
	// serves it and the agent's hello does not say it has no TLS.
	NoTLS string
	// NoConnect says why the connect scenario is not checked (its
	// stack.json's no_connect).
	NoConnect string
	// Declared is the stack.json the agent was started from, which its
	// hello must agree with; nil for a user's agent.
	Declared *stackfile.Stack
	// Model is the worker model it was started in, which its hello must
	// say ("" for its stack.json's default).
	Model string
	// Limits are how long the suite waits for the agent (ConformLimits
	// when zero).
	Limits Limits
}

// ConformLimits are the suite's waits: an op timeout of 5 s, and a
// millisecond more per op of a request.
var ConformLimits = Limits{OpTimeout: 5 * time.Second, PerOp: time.Millisecond}

// Result is one check's outcome on one subject: passed (Err and Skipped
// empty), failed (Err) or not run (Skipped says why).
type Result struct {
	Subject, Target string
	// Check is the check's name (Checks).
	Check string
	// Said is what a passed check saw, for a reader.
	Said    string
	Skipped string
	Err     error
}

// Failed says whether the check failed.
func (r Result) Failed() bool { return r.Err != nil }

// Status is PASS, FAIL or SKIP.
func (r Result) Status() string {
	switch {
	case r.Err != nil:
		return "FAIL"
	case r.Skipped != "":
		return "SKIP"
	}
	return "PASS"
}

// Line is the result on one line of visible text: its status, target,
// subject and check, and what it saw, why it failed or why it was not
// run (the agent's own words escaped: visible.Line).
func (r Result) Line() string {
	why := r.Said
	switch {
	case r.Err != nil:
		why = r.Err.Error()
	case r.Skipped != "":
		why = r.Skipped
	}
	line := fmt.Sprintf("%s %s from %s: %s", r.Status(), r.Target, r.Subject, r.Check)
	if why != "" {
		line += ": " + why
	}
	return visible.Line(line)
}

// Check is one check of the suite: its name and what it asks of an agent.
type Check struct {
	Name, Asks string
	run        func(ctx context.Context, s *session) (said, skip string, err error)
}

// Checks are the suite's checks, in the order they run.
func Checks() []Check { return slices.Clone(checks) }

var checks = []Check{
	{"hello", "its hello names a protocol dbsock speaks, its language and library, and (protocol 2) the target's protocol family and capabilities that agree with its stack.json", checkHello},
	{"overhead", "an overhead request is answered with one latency per empty op, none negative", checkOverhead},
	{"open tcp", "a connection opened over TCP on 127.0.0.1 is found by the server on that path, carrying its open's token, and serves a block", openPath(drivers.TCP)},
	{"open tcp6", "the same over TCP on [::1], where the server listens there", openPath(drivers.TCP6)},
	{"open unix", "the same over the server's Unix socket", openPath(drivers.Unix)},
	{"open tls", "the same over TLS on 127.0.0.1, trusting the open's CA, unless its hello or stack.json says it has no TLS there", openPath(drivers.TLS)},
	{"token", "two connections open at once are each found by the server by their own token", checkToken},
	{"block", "a block's answer on TCP and on the socket: one latency per key, no error, within dbsock's clock, and the server's count of lookups and record of the connection agree", checkBlocks},
	{"values", "a lookup of a row that does not exist is reported as that op's error, and so is each op that reads a value of another length than asked for (or the agent refuses that block as a whole)", checkValueErrors},
	{"open error", "an open that cannot be done (a socket nothing listens on) is answered with an error naming the open's id, and the agent keeps answering", checkOpenError},
	{"unknown id", "a block on a connection never opened is answered with an error naming its id, and the agent keeps answering", checkUnknownID},
	{"malformed", "a line that is not JSON, and a message of a type it does not know, are each answered with an error, and the agent keeps answering", checkMalformed},
	{"close", "close is answered with closed, and the server no longer shows the connection", checkClose},
	{"load", "(a worker model) a closed-loop load on two connections, and a paced one where it paces, each connection's ops answered and within dbsock's clock", checkLoads},
	{"connect", "(connect) a block of the connect scenario: each op on a connection of its own, answered without error", checkConnects},
	{"exit", "it exits with status 0 within 2 s of its stdin closing", checkExit},
}

// Conform runs every check on sub and returns their results, in the order
// of Checks. A check that fails ends the agent (as dbsock ends an agent
// that misbehaves); the next one starts it again. When the hello fails,
// no other check is run.
func Conform(ctx context.Context, sub Subject) []Result {
	s := &session{sub: sub}
	if s.sub.Limits == (Limits{}) {
		s.sub.Limits = ConformLimits
	}
	defer s.end()
	var out []Result
	var setup error
	if f, ok := sub.Driver.(drivers.ConnFinder); ok {
		s.finder = f
	} else {
		setup = fmt.Errorf("dbsock cannot find another process's connections on a %s server, so no agent is checked there", sub.Target)
	}
	if op, ok := sub.Driver.(drivers.AgentOp); ok && setup == nil {
		s.lookup = op.AgentOp()
	} else if setup == nil {
		setup = fmt.Errorf("the %s driver does not say its lookup in a form an agent can do", sub.Target)
	}
	for _, c := range checks {
		r := Result{Subject: sub.Name, Target: sub.Target, Check: c.Name}
		switch {
		case setup != nil:
			r.Err = setup
		case len(out) > 0 && out[0].Failed():
			r.Skipped = "not run: its hello failed"
		case ctx.Err() != nil:
			r.Skipped = "not run: " + context.Cause(ctx).Error()
		default:
			r.Said, r.Skipped, r.Err = c.run(ctx, s)
		}
		out = append(out, r)
	}
	return out
}

// session is the suite's state on one subject: the agent now running, and
// how many connections it was asked to open.
type session struct {
	sub    Subject
	a      *Agent
	finder drivers.ConnFinder
	lookup drivers.AgentLookup
	opened int
}

// agent is the running agent, started (again) when there is none or the
// last check ended it.
func (s *session) agent(ctx context.Context) (*Agent, error) {
	if s.a != nil && s.a.dead == nil {
		return s.a, nil
	}
	a, err := Start(ctx, s.sub.Spec, s.sub.Limits)
	if err != nil {
		return nil, err
	}
	s.a = a
	return a, nil
}

// end ends the agent, if one runs.
func (s *session) end() {
	if s.a != nil {
		_ = s.a.Close()
	}
}

// conn is a connection the suite had the agent open: its open and
// dbsock's own connection that found it on the server.
type suiteConn struct {
	o     Open
	f     drivers.Finder
	v     drivers.Verification
	claim drivers.Claim
}

// open has a open a connection on path, found on the server over
// dbsock's own connection on the same path; skip says why the server
// has no such path.
func (s *session) open(ctx context.Context, a *Agent, path drivers.Transport) (c *suiteConn, skip string, err error) {
	ep, err := s.sub.Server.Path(path)
	if err != nil {
		return nil, fmt.Sprintf("the %s server has no %s path here: %v", s.sub.Target, path, err), nil
	}
	o, err := s.newOpen(a, ep)
	if err != nil {
		return nil, "", err
	}
	f, err := s.finder.OpenFinder(ctx, ep)
	if err != nil {
		return nil, "", fmt.Errorf("open dbsock's own connection over %s to find the agent's: %w", path, err)
	}
	r, v, err := a.OpenVerified(ctx, f, o)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return &suiteConn{o: o, f: f, v: v, claim: drivers.Claim{Token: o.Token, ConnID: r.ConnID.String(), LocalAddr: r.LocalAddr}}, "", nil
}

// newOpen is the open of a fresh connection on ep, with a token of its own.
func (s *session) newOpen(a *Agent, ep drivers.Endpoint) (Open, error) {
	s.opened++
	id := fmt.Sprintf("s%d-%s", s.opened, ep.Transport) // apart from the ids the block check's Driver gives
	o, err := NewOpen(id, s.sub.Target, ep, Token(id), s.lookup.Statement, ep.TLSRoots)
	if err != nil {
		return Open{}, err
	}
	o.NoPrepare = s.lookup.NoPrepare
	if a.hello.Protocol >= 2 {
		o.Family = s.lookup.Family
	}
	return o, nil
}

// close has the agent close c, and closes dbsock's own connection.
func (c *suiteConn) close(ctx context.Context, a *Agent) error {
	defer c.f.Close()
	return a.CloseConn(ctx, c.o.ID)
}

// keys are n keys of the seeded rows, in order, starting over.
func (s *session) keys(n int) []any {
	rows := max(s.sub.Rows, 1)
	out := make([]any, n)
	for i := range out {
		out[i] = s.lookup.Key(int64(i%rows) + 1)
	}
	return out
}

// block has a run a block of n keys on c and checks that every op
// succeeded.
func (s *session) block(ctx context.Context, a *Agent, c *suiteConn, n int) error {
	r, err := a.Block(ctx, Block{ID: c.o.ID, Keys: s.keys(n), Warmup: 5, ValueLength: s.sub.Driver.ValueSize()})
	if err != nil {
		return err
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%d of the %d ops of a block on %s failed, the first: %s", len(r.Errors), n, c.o.Path, r.Errors[0].Message)
	}
	return nil
}

func checkHello(ctx context.Context, s *session) (string, string, error) {
	s.end()
	s.a = nil
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	h := a.Hello()
	said := fmt.Sprintf("%s, protocol %d", h, h.Protocol)
	if h.Protocol < 2 {
		if d := s.sub.Declared; d != nil && (d.DefaultModel() != "" || d.Connect) {
			return "", "", fmt.Errorf("its hello speaks protocol 1, but its stack.json says it runs loads (workers %q) or the connect scenario (connect %v), which need protocol 2", d.DefaultModel(), d.Connect)
		}
		return said + " (one connection at a time, closed loop)", "", nil
	}
	c := h.Capabilities
	if err := h.Speaks(s.lookup.Family, ""); err != nil {
		return "", "", fmt.Errorf("started for %s, whose protocol family is %s: %w", s.sub.Target, s.lookup.Family, err)
	}
	if d := s.sub.Declared; d != nil {
		want := cmp.Or(s.sub.Model, d.DefaultModel())
		switch {
		case want != c.Workers:
			return "", "", fmt.Errorf("its hello says workers %q, where it was started in its stack.json's %q: they must agree", c.Workers, want)
		case d.Connect && s.sub.NoConnect == "" && !c.Connect:
			return "", "", errors.New("its stack.json says connect, and its hello does not say it times the connect scenario (capabilities.connect)")
		}
	}
	said += fmt.Sprintf(", families %s, tls %v", strings.Join(c.Families, " "), c.TLS)
	if c.Workers != "" {
		said += ", workers " + c.Workers
	}
	if h.Mode != "" {
		said += ", mode " + h.Mode
	}
	return said, "", nil
}

func checkOverhead(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	ns, err := a.Overhead(ctx, 1000)
	if err != nil {
		return "", "", err
	}
	slices.Sort(ns)
	return fmt.Sprintf("1000 empty ops, p50 %d ns", ns[len(ns)/2]), "", nil
}

// openPath is the check of an open on path: found on the server on it,
// carrying its token, and serving a block of lookups.
func openPath(path drivers.Transport) func(context.Context, *session) (string, string, error) {
	return func(ctx context.Context, s *session) (string, string, error) {
		a, err := s.agent(ctx)
		if err != nil {
			return "", "", err
		}
		tls := path.Info().TLS
		if why := noTLS(s, a); tls && why != "" {
			return "", why, nil
		}
		c, skip, err := s.open(ctx, a, path)
		var refused *Refusal
		if tls && a.hello.Protocol < 2 && errors.As(err, &refused) {
			return "", fmt.Sprintf("it answered the open with an error, and its hello (protocol 1) does not say whether it has TLS: %v", err), nil
		}
		if err != nil || skip != "" {
			return "", skip, err
		}
		if err := s.block(ctx, a, c, 100); err != nil {
			return "", "", err
		}
		if err := c.close(ctx, a); err != nil {
			return "", "", err
		}
		return c.v.Evidence, "", nil
	}
}

// noTLS says why the tls path is not checked on s's agent a, or "".
func noTLS(s *session, a *Agent) string {
	if s.sub.NoTLS != "" {
		return s.sub.NoTLS
	}
	if c := a.hello.Capabilities; a.hello.Protocol >= 2 && c != nil && !c.TLS {
		return "its hello says " + a.hello.Library + " has no TLS"
	}
	return ""
}

// openTwo opens two connections over TCP for a check; done closes dbsock's
// own connections that verified them.
func (s *session) openTwo(ctx context.Context, a *Agent) (cs []*suiteConn, done func(), skip string, err error) {
	done = func() {
		for _, c := range cs {
			c.f.Close()
		}
	}
	for range 2 {
		c, skip, err := s.open(ctx, a, drivers.TCP)
		if err != nil || skip != "" {
			return cs, done, skip, err
		}
		cs = append(cs, c)
	}
	return cs, done, "", nil
}

func checkToken(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	cs, done, skip, err := s.openTwo(ctx, a)
	defer done()
	if err != nil || skip != "" {
		return "", skip, err
	}
	// Each is found again by its own token, the other one open beside it
	// (a server that names no connection, drivers.Anonymous, found each
	// as the one new connection at its open).
	for _, c := range cs {
		_, anonymous := c.f.(drivers.Anonymous)
		if _, err := c.f.Find(ctx, c.claim); err != nil && !anonymous {
			return "", "", fmt.Errorf("with two connections open, the server does not find %s by its token %s: %w", c.o.ID, c.o.Token, err)
		}
		if err := s.block(ctx, a, c, 20); err != nil {
			return "", "", err
		}
	}
	for _, c := range cs {
		if err := a.CloseConn(ctx, c.o.ID); err != nil {
			return "", "", err
		}
	}
	return fmt.Sprintf("%s and %s, tokens %s and %s", cs[0].o.ID, cs[1].o.ID, cs[0].o.Token, cs[1].o.Token), "", nil
}
