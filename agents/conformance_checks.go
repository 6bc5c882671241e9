package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dbsock/dbsock/agents/stackfile"
	"github.com/dbsock/dbsock/drivers"
)

// blockOps is how many lookups the block check times on each path.
const blockOps = 300

func checkBlocks(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	d, err := NewDriver(s.sub.Driver, a)
	if err != nil {
		return "", "", err
	}
	ids := make([]int64, min(max(s.sub.Rows, 1), 100))
	for i := range ids {
		ids[i] = int64(i) + 1
	}
	for _, path := range []drivers.Transport{drivers.TCP, drivers.Unix} {
		ep, err := s.sub.Server.Path(path)
		if err != nil {
			return "", "", err
		}
		c, err := d.Open(ctx, ep)
		if err != nil {
			return "", "", err
		}
		err = auditedBlock(ctx, c.(*conn), ids)
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", "", fmt.Errorf("on %s: %w", path, err)
		}
	}
	checked := "dbsock's clock only (the server keeps no count dbsock reads)"
	if by := d.Counted(); by != "" {
		checked = "dbsock's clock, " + by
	}
	return fmt.Sprintf("%d lookups on tcp and on unix, checked by %s", blockOps, checked), "", nil
}

// auditedBlock times a block of blockOps lookups of ids on c as a run
// times one, the server's counts read around it.
func auditedBlock(ctx context.Context, c *conn, ids []int64) error {
	c.UseKeys(ids)
	if err := c.StartAudit(ctx); err != nil {
		return err
	}
	ns, failed, err := c.TimeBlock(ctx, blockOps)
	if err != nil {
		return err
	}
	if err := c.EndAudit(ctx); err != nil {
		return err
	}
	if len(ns) != blockOps || len(failed) > 0 {
		return fmt.Errorf("%d latencies for %d lookups, %d of them failed%s", len(ns), blockOps, len(failed), firstFailure(failed))
	}
	return nil
}

func firstFailure(f []drivers.OpFailure) string {
	if len(f) == 0 {
		return ""
	}
	return fmt.Sprintf(", the first (op %d): %s", f[0].Index, f[0].Message)
}

func checkValueErrors(ctx context.Context, s *session) (string, string, error) {
	if s.lookup.Family == "pingpong" {
		return "", "dbsock's own servers keep no rows: an op reads back the message it wrote", nil
	}
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	c, skip, err := s.open(ctx, a, drivers.TCP)
	if err != nil || skip != "" {
		return "", skip, err
	}
	defer c.f.Close()
	rows := int64(max(s.sub.Rows, 1))
	size := s.sub.Driver.ValueSize()
	// A row that does not exist: that op alone is an error.
	missing, err := opErrors(ctx, a, c, []any{s.lookup.Key(1), s.lookup.Key(rows + 1), s.lookup.Key(2)}, size, []int{1})
	if err != nil {
		return "", "", fmt.Errorf("rows 1, %d (which does not exist) and 2: %w", rows+1, err)
	}
	said := fmt.Sprintf("op 1 (no row): %q", missing[0])
	// Values of another length than asked for: each op is an error, or the
	// agent refuses the block as a whole (dbsock's own agent checks the
	// length its driver was started with).
	wrong, err := opErrors(ctx, a, c, []any{s.lookup.Key(1), s.lookup.Key(2)}, size+1, []int{0, 1})
	var refused *Refusal
	switch {
	case errors.As(err, &refused):
		said += fmt.Sprintf("; a block asking for values of %d bytes refused as a whole: %v", size+1, err)
	case err != nil:
		return "", "", fmt.Errorf("rows 1 and 2, whose values have %d bytes, asked for %d: %w", size, size+1, err)
	default:
		said += fmt.Sprintf("; values of another length: %q", wrong[0])
	}
	if err := a.CloseConn(ctx, c.o.ID); err != nil {
		return "", "", err
	}
	return said, "", nil
}

// opErrors has a look keys up on c, values of size bytes, and checks
// that exactly the ops at want are errors; it returns their messages.
func opErrors(ctx context.Context, a *Agent, c *suiteConn, keys []any, size int, want []int) ([]string, error) {
	r, err := a.Block(ctx, Block{ID: c.o.ID, Keys: keys, ValueLength: size})
	if err != nil {
		return nil, err
	}
	var at []int
	var msgs []string
	for _, e := range r.Errors {
		at, msgs = append(at, e.Index), append(msgs, e.Message)
	}
	slices.Sort(at)
	if !slices.Equal(at, want) {
		return nil, fmt.Errorf("it reported errors at ops %v: want one at each of %v, and none elsewhere", at, want)
	}
	return msgs, nil
}

func checkOpenError(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	ep, err := s.sub.Server.Path(drivers.Unix)
	if err != nil {
		return "", "", err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	ep.Address = filepath.Join(os.TempDir(), "dbsock-conformance-"+hex.EncodeToString(b), "none.sock")
	o, err := s.newOpen(a, ep)
	if err != nil {
		return "", "", err
	}
	o.Type, o.OpTimeoutMs = TypeOpen, a.limits.OpTimeout.Milliseconds()
	if o.Password != "" && !slices.Contains(a.secrets, o.Password) {
		a.secrets = append(a.secrets, o.Password)
	}
	line, err := json.Marshal(o)
	if err != nil {
		return "", "", err
	}
	msg, err := s.refused(ctx, a, "open "+o.ID+" on "+ep.Address+", where nothing listens", line, o.ID, true)
	return msg, "", err
}

func checkUnknownID(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	const id = "never-opened"
	line, err := json.Marshal(Block{Type: TypeBlock, ID: id, Keys: s.keys(1), ValueLength: s.sub.Driver.ValueSize()})
	if err != nil {
		return "", "", err
	}
	msg, err := s.refused(ctx, a, "block on "+id+", a connection never opened", line, id, true)
	return msg, "", err
}

func checkMalformed(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	var said []string
	for _, m := range []struct{ what, line, id string }{
		{"a line that is not JSON", "this line is not JSON: an agent answers it with an error", ""},
		{"a message of a type it does not know", `{"type": "no-such-request", "id": "m-1"}`, "m-1"},
	} {
		msg, err := s.refused(ctx, a, m.what, []byte(m.line), m.id, false)
		if err != nil {
			return "", "", err
		}
		said = append(said, fmt.Sprintf("%s: %q", m.what, msg))
	}
	return strings.Join(said, "; "), "", nil
}

// errorAnswer is an agent's answer where the suite wants an error.
type errorAnswer struct {
	Type    string  `json:"type"`
	ID      *string `json:"id"`
	Message string  `json:"message"`
}

// refused sends line, a request the agent cannot do, and checks that it
// answers with an error whose id is the request's (it must name it when
// named; otherwise it may leave it out or empty), and then still answers
// a request; it returns the error's message.
func (s *session) refused(ctx context.Context, a *Agent, what string, line []byte, id string, named bool) (string, error) {
	if a.dead != nil {
		return "", a.dead
	}
	wait := a.limits.wait(1)
	if err := a.send(ctx, what, line, wait); err != nil {
		return "", err
	}
	raw, err := a.read(ctx, "answer to "+what, MaxLine, wait)
	if err != nil {
		return "", err
	}
	var e errorAnswer
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", a.garbage("answer to "+what, raw, err)
	}
	got := "no id"
	if e.ID != nil {
		got = fmt.Sprintf("id %q", *e.ID)
	}
	switch {
	case e.Type != TypeError:
		return "", a.fail(fmt.Errorf("it answered %s with a message of type %q, not an error", what, e.Type))
	case named && (e.ID == nil || *e.ID != id):
		return "", a.fail(fmt.Errorf("its error in answer to %s has %s, not the request's id %q", what, got, id))
	case !named && e.ID != nil && *e.ID != "" && *e.ID != id:
		return "", a.fail(fmt.Errorf("its error in answer to %s has %s, which the request did not name", what, got))
	case strings.TrimSpace(e.Message) == "":
		return "", a.fail(fmt.Errorf("its error in answer to %s says nothing (an empty message)", what))
	}
	if _, err := a.Overhead(ctx, 1); err != nil {
		return "", fmt.Errorf("after its error in answer to %s, it no longer answers: %w", what, err)
	}
	return clip(a.redact(e.Message), 200), nil
}

// gone is how long the close check waits for the server to drop a
// closed connection.
const gone = 3 * time.Second

func checkClose(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	c, skip, err := s.open(ctx, a, drivers.TCP)
	if err != nil || skip != "" {
		return "", skip, err
	}
	defer c.f.Close()
	if err := a.CloseConn(ctx, c.o.ID); err != nil {
		return "", "", err
	}
	for deadline := time.Now().Add(gone); ; time.Sleep(50 * time.Millisecond) {
		if _, err := c.f.Find(ctx, c.claim); err != nil {
			return "closed, and the server no longer shows it: " + err.Error(), "", nil
		}
		if time.Now().After(deadline) {
			return "", "", fmt.Errorf("it answered close %s with closed, but the server still shows the connection (token %s) %s later", c.o.ID, c.o.Token, gone)
		}
	}
}

func checkLoads(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	h := a.Hello()
	if err := h.CanLoad(2, false); err != nil {
		return "", "not run: " + err.Error(), nil
	}
	cs, done, skip, err := s.openTwo(ctx, a)
	defer done()
	if err != nil || skip != "" {
		return "", skip, err
	}
	loads := []Load{{IDs: []string{cs[0].o.ID, cs[1].o.ID}, Keys: [][]any{s.keys(50), s.keys(50)}, Warmup: 5, ValueLength: s.sub.Driver.ValueSize()}}
	said := "a closed loop of 2 × 50 ops"
	if h.Capabilities.OpenLoop {
		paced := loads[0]
		paced.Keys, paced.IntervalNs, paced.OffsetsNs = [][]any{s.keys(20), s.keys(20)}, int64(2*time.Millisecond), []int64{0, int64(time.Millisecond)}
		loads = append(loads, paced)
		said += ", and 2 × 20 ops paced at one every 2 ms"
	}
	for _, l := range loads {
		r, err := a.Load(ctx, l)
		if err != nil {
			return "", "", err
		}
		for i, cr := range r.Results {
			if len(cr.Errors) > 0 || len(cr.Ns) != len(l.Keys[i]) {
				return "", "", fmt.Errorf("a load's connection %s: %d latencies for %d keys, %d errors", cr.ID, len(cr.Ns), len(l.Keys[i]), len(cr.Errors))
			}
		}
	}
	for _, c := range cs {
		if err := a.CloseConn(ctx, c.o.ID); err != nil {
			return "", "", err
		}
	}
	return said, "", nil
}

func checkConnects(ctx context.Context, s *session) (string, string, error) {
	if s.sub.NoConnect != "" {
		return "", "not run: " + s.sub.NoConnect, nil
	}
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	if err := a.hello.CanConnect(); err != nil {
		return "", "not run: " + err.Error(), nil
	}
	c, skip, err := s.open(ctx, a, drivers.TCP)
	if err != nil || skip != "" {
		return "", skip, err
	}
	defer c.f.Close()
	r, err := a.Block(ctx, Block{ID: c.o.ID, Keys: s.keys(5), ValueLength: s.sub.Driver.ValueSize(), Scenario: ScenarioConnect})
	if err != nil {
		return "", "", err
	}
	if len(r.Errors) > 0 {
		return "", "", fmt.Errorf("%d of the 5 ops of a connect block failed, the first: %s", len(r.Errors), r.Errors[0].Message)
	}
	if err := a.CloseConn(ctx, c.o.ID); err != nil {
		return "", "", err
	}
	return "5 ops, each on a connection of its own", "", nil
}

func checkExit(ctx context.Context, s *session) (string, string, error) {
	a, err := s.agent(ctx)
	if err != nil {
		return "", "", err
	}
	err = a.Close()
	var td *Teardown
	if errors.As(err, &td) {
		return "", "", td
	}
	return "exited with status 0 when its stdin closed", "", err
}

// Claim is a target a stack's stack.json claims, with one of its
// libraries for it, in one of its worker models (Model "": its default).
type Claim struct {
	Stack, Target, Library string
	Model                  string
}

// Name is the claim's stack as --clients names it: STACK, or
// STACK:LIBRARY for a library other than the target's default, then
// :MODEL (ModelWord) for a worker model other than the stack's default.
func (c Claim) Name(def string) string {
	name := c.Stack
	if c.Library != def {
		name += ":" + c.Library
	}
	if c.Model != "" {
		name += ":" + ModelWord(c.Model)
	}
	return name
}

// Claims are every (stack, target, library, model) the stack directories
// of the agents directory dir ("" for Dir's) claim, read from their
// stack.json files: each target of each protocol family that has
// libraries (every target the registry says is of the family, TargetsOf),
// with each of them, in its default worker model and each other model
// that runs it, in the stacks' order, then the targets' names.
func Claims(dir string) ([]Claim, error) {
	c, err := load(dir)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for _, s := range c.stacks {
		for _, t := range targetsOf(s) {
			f, _ := Family(t)
			for _, lib := range s.Families[f].Libraries {
				out = append(out, Claim{Stack: s.Name, Target: t, Library: lib})
				for _, m := range s.AllModels()[min(1, len(s.AllModels())):] {
					if s.ModelMissing(m, lib) == "" {
						out = append(out, Claim{Stack: s.Name, Target: t, Library: lib, Model: m})
					}
				}
			}
		}
	}
	return out, nil
}

// targetsOf are the targets of every protocol family s has, by name.
func targetsOf(s stackfile.Stack) []string {
	var ts []string
	for f := range s.Families {
		ts = append(ts, TargetsOf(f)...)
	}
	slices.Sort(ts)
	return ts
}
