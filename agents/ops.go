package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Token is a fresh token for connection id: "dbsock-" and 16 random hex
// digits and the id, short enough for every server's name field (a
// SQL server's application name holds 63 bytes, another's lock name 64).
func Token(id string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "dbsock-" + hex.EncodeToString(b) + "-" + clip(id, 20)
}

// Open asks the agent to open the connection o describes, and returns
// its answer (unverified: see OpenVerified).
func (a *Agent) Open(ctx context.Context, o Open) (Opened, error) {
	o.Type = TypeOpen
	o.OpTimeoutMs = a.limits.OpTimeout.Milliseconds()
	if o.Password != "" && !slices.Contains(a.secrets, o.Password) {
		a.secrets = append(a.secrets, o.Password)
	}
	var r Opened
	if err := a.request(ctx, "open "+o.ID+" ("+o.Path+" "+o.Address+")", o, TypeOpened, &r, MaxLine, 0); err != nil {
		return Opened{}, err
	}
	if r.ID != o.ID {
		return Opened{}, a.fail(fmt.Errorf("it answered open %s with opened %q", o.ID, r.ID))
	}
	return r, nil
}

// ErrRoute is wrapped when the server sees an agent's connection on
// another route than the one the agent was asked to open, or cannot find
// it at all.
var ErrRoute = errors.New("the server does not see the agent's connection on its path")

// OpenVerified opens o on the agent and checks through f (dbsock's own
// connection to the server) that the server sees one connection carrying
// o's token, on o's path. On a mismatch it closes the connection, kills
// the agent and says what the server saw.
func (a *Agent) OpenVerified(ctx context.Context, f drivers.Finder, o Open) (Opened, drivers.Verification, error) {
	if err := f.Expect(ctx, o.Token); err != nil {
		return Opened{}, drivers.Verification{}, fmt.Errorf("prepare to verify %s's connection %s: %w", a.spec.Stack, o.ID, err)
	}
	r, err := a.Open(ctx, o)
	if err != nil {
		return Opened{}, drivers.Verification{}, err
	}
	claim := drivers.Claim{Token: o.Token, ConnID: r.ConnID.String(), LocalAddr: r.LocalAddr}
	v, err := f.Find(ctx, claim)
	if err != nil {
		return r, v, a.fail(fmt.Errorf("%w: connection %s, asked to open %s %s with token %s: %v", ErrRoute, o.ID, o.Path, o.Address, o.Token, err))
	}
	v = v.On(drivers.Endpoint{Transport: drivers.Transport(o.Path), Address: o.Address})
	if string(v.Transport) != o.Path {
		return r, v, a.fail(fmt.Errorf("%w: connection %s was to be on %s (%s) but the server sees the connection with token %s on %s (%s)",
			ErrRoute, o.ID, o.Path, o.Address, o.Token, v.Transport, v.Evidence))
	}
	return r, v, nil
}

// Block runs one block on the agent and checks its result: one latency
// per key, none negative, errors only at ops of the block.
func (a *Agent) Block(ctx context.Context, b Block) (BlockResult, error) {
	n := len(b.Keys) + b.Warmup
	if len(b.Keys) == 0 || len(b.Keys) > MaxOps || b.Warmup < 0 || n > MaxOps {
		return BlockResult{}, fmt.Errorf("block on %s: %d keys and %d warm-up ops; want 1 to %d in all", b.ID, len(b.Keys), b.Warmup, MaxOps)
	}
	if b.Scenario == ScenarioConnect {
		if err := a.hello.CanConnect(); err != nil {
			return BlockResult{}, fmt.Errorf("the %s agent: %w", a.spec.Stack, err)
		}
	}
	b.Type = TypeBlock
	var r BlockResult
	what := fmt.Sprintf("block %s of %d keys", b.ID, len(b.Keys))
	limit := MaxLine + len(b.Keys)*(MaxLatencyBytes+MaxErrorBytes)
	if err := a.requestWithin(ctx, what, b, TypeBlockResult, &r, limit, a.limits.waitFor(n, b.Scenario)); err != nil {
		return BlockResult{}, err
	}
	span := a.answerSpan()
	if r.ID != b.ID {
		return BlockResult{}, a.fail(fmt.Errorf("it answered %s with the result of %q", what, r.ID))
	}
	if len(r.Ns) != len(b.Keys) {
		return BlockResult{}, a.fail(fmt.Errorf("it returned %d latencies for %s: one per key is the protocol", len(r.Ns), what))
	}
	if err := checkNs(r.Ns); err != nil {
		return BlockResult{}, a.fail(fmt.Errorf("%s: %w", what, err))
	}
	for i, e := range r.Errors {
		if e.Index < 0 || e.Index >= len(b.Keys) {
			return BlockResult{}, a.fail(fmt.Errorf("it reported an error at op %d of %s", e.Index, what))
		}
		r.Errors[i].Message = clip(a.redact(e.Message), MaxErrorBytes)
	}
	if err := checkWall(r, span); err != nil {
		return BlockResult{}, a.fail(fmt.Errorf("%w: %s: %w", ErrUnseen, what, err))
	}
	return r, nil
}

// MinRoundTrip is the shortest latency dbsock believes of an op that
// crossed to a server process and back, over loopback or a Unix socket:
// a write, the server's wake-up, its read and write, and the client's
// read. The kernel floor itself (the floor stack: C ping-pong with an
// echo server) is several times longer on the machines dbsock was
// measured on (docs/agents.md).
const MinRoundTrip = 2 * time.Microsecond

// checkWall checks a block's latencies against dbsock's own clock: wall
// is what the request took from its write to its answer's first byte
// (the agent's span), so the latencies of its ops cannot add up to more,
// and no op that succeeded took less than MinRoundTrip.
func checkWall(r BlockResult, wall time.Duration) error {
	failed := make(map[int]bool, len(r.Errors))
	for _, e := range r.Errors {
		failed[e.Index] = true
	}
	var sum int64
	for i, v := range r.Ns {
		if v < int64(MinRoundTrip) && !failed[i] {
			return fmt.Errorf("op %d took %d ns by the agent's clock, less than a round trip to a server can (%s)", i, v, MinRoundTrip)
		}
		if v > wall.Nanoseconds()-sum {
			sum = wall.Nanoseconds() + 1
		} else {
			sum += v
		}
		if sum > wall.Nanoseconds() {
			return fmt.Errorf("its latencies add up to more than the whole request took on dbsock's clock (%s) by op %d", wall.Round(time.Microsecond), i)
		}
	}
	return nil
}

// Overhead has the agent time an empty op n times, as it times an op, and
// returns the latencies in nanoseconds.
func (a *Agent) Overhead(ctx context.Context, n int) ([]int64, error) {
	if n < 1 || n > MaxOps {
		return nil, fmt.Errorf("overhead of the %s agent: %d empty ops; want 1 to %d", a.spec.Stack, n, MaxOps)
	}
	var r OverheadResult
	what := fmt.Sprintf("overhead of %d empty ops", n)
	if err := a.request(ctx, what, Overhead{Type: TypeOverhead, N: n}, TypeOverheadResult, &r, MaxLine+n*MaxLatencyBytes, n); err != nil {
		return nil, err
	}
	if len(r.Ns) != n {
		return nil, a.fail(fmt.Errorf("it returned %d latencies for the %s", len(r.Ns), what))
	}
	if err := checkNs(r.Ns); err != nil {
		return nil, a.fail(fmt.Errorf("%s: %w", what, err))
	}
	return r.Ns, nil
}

// CloseConn asks the agent to close connection id.
func (a *Agent) CloseConn(ctx context.Context, id string) error {
	var r struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if err := a.request(ctx, "close "+id, Close{Type: TypeClose, ID: id}, TypeClosed, &r, MaxLine, 0); err != nil {
		return err
	}
	if r.ID != id {
		return a.fail(fmt.Errorf("it answered close %s with closed %q", id, r.ID))
	}
	return nil
}

func checkNs(ns []int64) error {
	for i, v := range ns {
		if v < 0 {
			return fmt.Errorf("latency %d is %d ns: a monotonic clock never runs back", i, v)
		}
	}
	return nil
}
