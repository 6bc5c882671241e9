// Package goagent is dbsock's own Go client stack behind the agent
// protocol (docs/agents.md): `dbsock agent TARGET` serves it on its stdin
// and stdout, so that the loop dbsock runs elsewhere (its client
// container, --client container) is an agent like the other stacks', its
// connections checked on the server side and its latencies audited by the
// same code. Its connections are the target driver's own (the ones the
// in-process loop opens), each carrying the token dbsock gave it
// (drivers.NamedOpener); its ops are the driver's DoKey on the keys each
// request names; a load runs a goroutine per connection, paced with the
// timing loop's own pacer (scenarios.Pacer).
//
// It is part of dbsock's own machinery, and its API may change between
// versions.
package goagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
)

// Limits of what the agent takes and does.
const (
	// MaxRequest is the longest request line it reads (a block or a
	// load of agents.MaxOps keys takes a few MB).
	MaxRequest = 32 << 20
	// MaxOpen is the most connections open at once.
	MaxOpen = 1024
	// MaxConnections is the most connections of one load (its hello says
	// it).
	MaxConnections = 256
	// MaxLoadOps is the most ops of one load in all.
	MaxLoadOps = 1_000_000
	// MaxFails is how many failed ops in a row end a connection's part of
	// a load.
	MaxFails = 10
	// MaxMessage is the most bytes of one op's error it reports.
	MaxMessage = 500
)

// Workers is the hello's worker model: a goroutine per connection.
const Workers = agents.Goroutines

// Agent is one target's driver served as an agent.
type Agent struct {
	d      drivers.Driver
	named  drivers.NamedOpener
	lookup drivers.AgentLookup
	hello  agents.Hello
	conns  map[string]*conn
}

// New is d's agent; library and version name d's client library in the
// hello. d must open named connections and say its lookup as an agent's
// (drivers.NamedOpener, drivers.AgentOp), as every target an agent can
// measure does.
func New(d drivers.Driver, library, version string) (*Agent, error) {
	named, ok := d.(drivers.NamedOpener)
	if !ok {
		return nil, fmt.Errorf("dbsock agent: the %s driver cannot open a connection the server shows by a token, so dbsock could not verify it: use --client inprocess for %s", d.Name(), d.Name())
	}
	op, ok := d.(drivers.AgentOp)
	if !ok {
		return nil, fmt.Errorf("dbsock agent: the %s driver does not say its lookup in a form an agent does: use --client inprocess for %s", d.Name(), d.Name())
	}
	h := agents.Hello{Type: agents.TypeHello, Protocol: agents.Protocol, Language: "go", RuntimeVersion: strings.TrimPrefix(runtime.Version(), "go"),
		Library: library, LibraryVersion: version, Mode: d.Mode(), PID: os.Getpid(),
		Capabilities: &agents.Capabilities{Families: []string{op.AgentOp().Family}, TLS: true, Workers: Workers, OpenLoop: true, MaxConnections: MaxConnections, Connect: true}}
	return &Agent{d: d, named: named, lookup: op.AgentOp(), hello: h, conns: map[string]*conn{}}, nil
}

// Hello is what the agent says first.
func (a *Agent) Hello() agents.Hello { return a.hello }

// Serve writes the hello to out, then answers each request line of in,
// in order, until in ends (or ctx is done); it closes every connection
// still open before it returns. An error is in or out failing, or a
// request over MaxRequest: the protocol is over.
func (a *Agent) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	defer a.closeAll()
	w := bufio.NewWriterSize(out, 64<<10)
	if err := send(w, a.hello); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxRequest)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := send(w, a.answer(ctx, sc.Bytes())); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("dbsock agent: a request line over %d bytes: the protocol's requests are smaller", MaxRequest)
	}
	return sc.Err()
}

func send(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("dbsock agent: write an answer: %w", err)
	}
	w.Write(append(b, '\n'))
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dbsock agent: write an answer to dbsock: %w", err)
	}
	return nil
}

// answer is the answer to one request line: its result, or an error
// message.
func (a *Agent) answer(ctx context.Context, line []byte) any {
	var head struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return fail("", fmt.Errorf("a request that is not a JSON object: %w", err))
	}
	r, err := a.do(ctx, head.Type, line)
	if err != nil {
		return fail(head.ID, err)
	}
	return r
}

func (a *Agent) do(ctx context.Context, typ string, line []byte) (any, error) {
	switch typ {
	case agents.TypeOpen:
		var o agents.Open
		if err := decode(line, &o); err != nil {
			return nil, err
		}
		return a.open(ctx, o)
	case agents.TypeBlock:
		var b agents.Block
		if err := decode(line, &b); err != nil {
			return nil, err
		}
		return a.block(ctx, b)
	case agents.TypeLoad:
		var l agents.Load
		if err := decode(line, &l); err != nil {
			return nil, err
		}
		return a.load(ctx, l)
	case agents.TypeOverhead:
		var o agents.Overhead
		if err := decode(line, &o); err != nil {
			return nil, err
		}
		return overhead(o.N)
	case agents.TypeClose:
		var c agents.Close
		if err := decode(line, &c); err != nil {
			return nil, err
		}
		return a.close(c.ID)
	}
	return nil, fmt.Errorf("a request of type %q: this agent answers open, block, load, overhead and close", typ)
}

// decode reads a request, its numbers as json.Number (an SQL target's keys
// are integers).
func decode(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("a request that does not read as the protocol's: %w", err)
	}
	return nil
}

func fail(id string, err error) agents.ErrorMessage {
	return agents.ErrorMessage{Type: agents.TypeError, ID: id, Message: clip(err.Error(), agents.MaxErrorBytes)}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// conn is one open connection.
type conn struct {
	c       drivers.Conn
	k       drivers.Keyed
	nkeys   int // of the keys handed to k
	timeout time.Duration
	dog     *watchdog
	// The connect scenario's: whether the request in progress is one of
	// it, and what its connections are opened with (reopen.go).
	connect bool
	reopen  reopen
}

// open opens o's connection with the driver, carrying o's token.
func (a *Agent) open(ctx context.Context, o agents.Open) (agents.Opened, error) {
	if o.ID == "" {
		return agents.Opened{}, errors.New("open without an id")
	}
	if _, ok := a.conns[o.ID]; ok {
		return agents.Opened{}, fmt.Errorf("open %s: a connection of that id is open", o.ID)
	}
	if len(a.conns) >= MaxOpen {
		return agents.Opened{}, fmt.Errorf("open %s: %d connections are open, the most this agent holds", o.ID, MaxOpen)
	}
	if o.Family != "" && o.Family != a.lookup.Family {
		return agents.Opened{}, fmt.Errorf("open %s: protocol family %s; this agent speaks %s", o.ID, o.Family, a.lookup.Family)
	}
	if o.NoPrepare != a.lookup.NoPrepare {
		return agents.Opened{}, fmt.Errorf("open %s: no_prepare %v, but this agent's %s driver (mode %s) says %v: start it with the run's settings", o.ID, o.NoPrepare, a.d.Name(), a.d.Mode(), a.lookup.NoPrepare)
	}
	ep, err := endpoint(o)
	if err != nil {
		return agents.Opened{}, err
	}
	timeout := time.Duration(o.OpTimeoutMs) * time.Millisecond
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c, err := a.named.OpenNamed(ctx, ep, o.Token)
	if err != nil {
		return agents.Opened{}, fmt.Errorf("open %s over %s: %w", o.ID, ep, err)
	}
	k, ok := c.(drivers.Keyed)
	if !ok {
		c.Close()
		return agents.Opened{}, fmt.Errorf("open %s: the %s driver's connection does not look up a key it is given", o.ID, a.d.Name())
	}
	a.conns[o.ID] = &conn{c: c, k: k, nkeys: 1, timeout: timeout, dog: newWatchdog(c, timeout), reopen: reopen{d: a.d, ep: ep}}
	return agents.Opened{Type: agents.TypeOpened, ID: o.ID, Detail: "dbsock's " + a.d.Name() + " driver"}, nil
}

// endpoint is the endpoint o names, with its TLS settings on the tls path.
func endpoint(o agents.Open) (drivers.Endpoint, error) {
	ep := drivers.Endpoint{Transport: drivers.Transport(o.Path), Address: o.Address, User: o.User, Password: o.Password, Database: o.Database}
	switch {
	case o.Network == "unix" && ep.Transport.Network() != "unix", o.Network != "unix" && ep.Transport.Network() == "unix":
		return ep, fmt.Errorf("open %s: path %s over network %s", o.ID, o.Path, o.Network)
	case o.CAPEM != "":
		cfg, err := drivers.TLSFrom([]byte(o.CAPEM), o.Address)
		if err != nil {
			return ep, fmt.Errorf("open %s: %w", o.ID, err)
		}
		if o.ServerName != "" {
			cfg.ServerName = o.ServerName
		}
		ep.TLS, ep.TLSRoots = cfg, []byte(o.CAPEM)
	case ep.Transport.Info().TLS:
		return ep, fmt.Errorf("open %s on the tls path: no CA certificate (tls_ca_pem) to trust", o.ID)
	}
	if ep.Transport.Route().Info().Netns {
		return ep, nil // dialed from this process's own namespace, which is the container's
	}
	if err := ep.Validate(); err != nil {
		return ep, fmt.Errorf("open %s: %w", o.ID, err)
	}
	return ep, nil
}

// close closes connection id.
func (a *Agent) close(id string) (any, error) {
	c, ok := a.conns[id]
	if !ok {
		return nil, fmt.Errorf("close %s: no such connection", id)
	}
	delete(a.conns, id)
	c.dog.stop()
	if err := c.c.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", id, err)
	}
	return agents.Close{Type: agents.TypeClosed, ID: id}, nil
}

func (a *Agent) closeAll() {
	for id := range a.conns {
		_, _ = a.close(id)
	}
}
