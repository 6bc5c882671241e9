// Package agents runs a client stack's agent (a small program in C,
// Python, Node.js, PHP or a user's own language that opens connections to
// a server and times lookups with its language's client library) and
// speaks the agent protocol with it: JSON lines over the agent's stdin and
// stdout, each message size-limited and each answer awaited with a
// deadline (docs/agents.md). Every connection an agent opens is checked on
// the server side through the target driver's drivers.ConnFinder before
// any of its ops is timed.
//
// It is part of dbsock's own machinery, and its API may change between
// versions.
package agents

import (
	"crypto/tls"
	"encoding/json"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
)

// Protocol is the version of the agent protocol this package speaks; an
// agent's hello names the one it speaks, Protocol or an earlier one down
// to MinProtocol. Version 2 adds the hello's capabilities, the open's
// protocol family and the load request (many connections, an offered
// rate); an agent of version 1 measures one connection, closed loop.
const (
	Protocol    = 2
	MinProtocol = 1
)

// A protocol family is the wire protocol an agent speaks to the server,
// whatever dbsock calls the target (a pooler speaks its database's): each
// target's driver names its own (drivers.AgentLookup.Family), and an
// agent's hello lists those it speaks. Its name is lower-case letters and
// digits.

// Size limits of what an agent may write: a line over its limit is an
// error, and the agent is killed.
const (
	// MaxLine is the limit of every answer but a block's or an
	// overhead's result.
	MaxLine = 64 << 10
	// MaxLatencyBytes is what one latency may take in a result: up to
	// 19 digits and a comma.
	MaxLatencyBytes = 20
	// MaxErrorBytes is what each op's error may take in a result.
	MaxErrorBytes = 512
	// MaxOps is the most ops (keys and warm-up) of one block, or of one
	// overhead request: a block's answer then takes at most about 53 MB.
	MaxOps = 100_000
	// MaxStderr is how much of an agent's stderr is kept for errors.
	MaxStderr = 8 << 10
)

// Message types, as the "type" field names them.
const (
	TypeHello          = "hello"
	TypeOpen           = "open"
	TypeOpened         = "opened"
	TypeBlock          = "block"
	TypeBlockResult    = "block_result"
	TypeOverhead       = "overhead"
	TypeOverheadResult = "overhead_result"
	TypeClose          = "close"
	TypeClosed         = "closed"
	TypeLoad           = "load"
	TypeLoadResult     = "load_result"
	TypeError          = "error"
)

// Hello is an agent's first line: what it is.
type Hello struct {
	Type           string `json:"type"`
	Protocol       int    `json:"protocol"`
	Language       string `json:"language"`
	RuntimeVersion string `json:"runtime_version"`
	Library        string `json:"library"`
	LibraryVersion string `json:"library_version"`
	// Mode, optional, is how the agent's library does the target's op
	// where that changes what crosses the wire, named as a case's mode
	// is (docs/agents.md): "resp2" or "resp3" for a RESP server; for SQL,
	// "prepared" (prepared once per connection, executed per op), "exec"
	// (the statement and its parameter sent unnamed per op) or
	// "interpolate" (the key written into the statement's text). An agent
	// that does not say gets ModeNotSaid, never Go's.
	Mode string `json:"mode,omitempty"`
	// UnpreparedMode, optional, is the mode when an open says no_prepare,
	// where it differs from Mode.
	UnpreparedMode string `json:"unprepared_mode,omitempty"`
	// Capabilities (protocol 2) are what the agent can do; nil for
	// protocol 1: one connection at a time, closed loop.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	// PID, optional, is the agent's process id in its own PID namespace,
	// said by an agent that dbsock does not start as its own child:
	// dbsock's own agent in its client container (a PID namespace of its
	// own), whose process dbsock finds on the host, in the container's
	// cgroup, to read its CPU time.
	PID int `json:"pid,omitempty"`
}

// Capabilities are what an agent of protocol 2 says it can do: dbsock
// asks it for nothing else.
type Capabilities struct {
	// Families are the protocol families it speaks with the library it
	// was started with.
	Families []string `json:"families"`
	// TLS says whether it can open the tls path.
	TLS bool `json:"tls"`
	// Workers is how it runs a load: "threads" (a thread per
	// connection), "processes" (a process per connection) or
	// "event-loop" (one event loop, N connections); "" for none.
	Workers string `json:"workers,omitempty"`
	// OpenLoop says that it paces a load at an offered rate.
	OpenLoop bool `json:"open_loop,omitempty"`
	// MaxConnections is the most connections one load may have.
	MaxConnections int `json:"max_connections,omitempty"`
	// Connect says that it times the connect scenario: a block or load
	// whose Scenario is ScenarioConnect.
	Connect bool `json:"connect,omitempty"`
}

// ScenarioConnect is a block's or a load's Scenario when each op opens a
// connection of its own, with the settings the block's connection was
// opened with, does the lookup on it and closes it: its latency runs
// from before the open to the close's end, as dbsock's Go client times
// the connect scenario.
const ScenarioConnect = "connect"

// String names the stack for people: "LIBRARY VERSION (LANGUAGE VERSION)".
func (h Hello) String() string {
	return fmt.Sprintf("%s %s (%s %s)", h.Library, h.LibraryVersion, h.Language, h.RuntimeVersion)
}

// Open asks the agent to open one connection.
type Open struct {
	Type string `json:"type"`
	// ID names the connection in every later message.
	ID     string `json:"id"`
	Target string `json:"target"`
	// Family (protocol 2) is the protocol the server speaks, as its
	// target's driver names it: agents dispatch on it, not on Target.
	Family string `json:"family,omitempty"`
	// Path is dbsock's name of the route (tcp, tcp6, tls, unix);
	// Network is what the agent dials: "tcp" (TLS over it when CAPEM is
	// set) or "unix".
	Path    string `json:"path"`
	Network string `json:"network"`
	// Host and Port are set for tcp, Socket for unix; Address is the
	// endpoint as dbsock writes it (HOST:PORT or the socket's path).
	Address string `json:"address"`
	Host    string `json:"host,omitempty"`
	Port    int    `json:"port,omitempty"`
	Socket  string `json:"socket,omitempty"`
	// CAPEM is the CA certificate to trust, in PEM, on the tls path;
	// ServerName is the name to check in the server's certificate.
	CAPEM      string `json:"tls_ca_pem,omitempty"`
	ServerName string `json:"tls_server_name,omitempty"`
	User       string `json:"user,omitempty"`
	Password   string `json:"password,omitempty"`
	Database   string `json:"database,omitempty"`
	// Token is what the connection must make the server see (docs/agents.md).
	Token string `json:"token"`
	// Statement is the lookup of an SQL target, with its one parameter
	// written as the server's own placeholder ($1 or ?); "" for others.
	Statement string `json:"statement,omitempty"`
	// NoPrepare says that the statement must not be prepared on the
	// server: a pooler in transaction pooling cannot keep it.
	NoPrepare bool `json:"no_prepare,omitempty"`
	// OpTimeoutMs is the limit of one op, for the agent's library.
	OpTimeoutMs int64 `json:"op_timeout_ms"`
}

// Opened is the agent's answer to Open.
type Opened struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	// ConnID is the server's id of the connection, where the agent reads
	// one (a connection id, a backend process id).
	ConnID json.Number `json:"conn_id,omitempty"`
	// LocalAddr is the agent's own IP:PORT of a TCP connection, where its
	// library shows it.
	LocalAddr string `json:"local_addr,omitempty"`
	// Detail is anything else the agent says of the connection.
	Detail string `json:"detail,omitempty"`
}

// Block asks the agent to look keys up on one connection, in order,
// timing each: Warmup untimed ops first (keys[i % len(keys)]).
type Block struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Keys   []any  `json:"keys"`
	Warmup int    `json:"warmup"`
	// ValueLength is the length in bytes every value must have.
	ValueLength int `json:"value_length"`
	// Scenario is ScenarioConnect, or "" for lookups on the connection.
	Scenario string `json:"scenario,omitempty"`
}

// OpError is one op's failure: an error or a value of the wrong length.
type OpError struct {
	Index   int    `json:"index"`
	Message string `json:"message"`
}

// BlockResult is the agent's answer to Block: one latency per key, in
// nanoseconds on the language's monotonic clock, and the ops that failed.
type BlockResult struct {
	Type   string    `json:"type"`
	ID     string    `json:"id"`
	Ns     []int64   `json:"ns"`
	Errors []OpError `json:"errors,omitempty"`
}

// Overhead asks the agent to time an empty op N times, as it times ops.
type Overhead struct {
	Type string `json:"type"`
	N    int    `json:"n"`
}

// OverheadResult is the agent's answer to Overhead.
type OverheadResult struct {
	Type string  `json:"type"`
	Ns   []int64 `json:"ns"`
}

// Load (protocol 2) asks the agent to run ops on several of its
// connections at once, each in its own worker, from one moment T0 on
// its clock (docs/agents.md): closed loop when IntervalNs is 0, else
// op j of connection c is due at T0 + OffsetsNs[c] + j*IntervalNs.
type Load struct {
	Type string `json:"type"`
	// IDs are the connections; Keys[c] are the keys of IDs[c], looked up
	// in order (starting over at the end under DurationNs).
	IDs  []string `json:"ids"`
	Keys [][]any  `json:"keys"`
	// Warmup untimed ops on each connection come first, closed loop.
	Warmup      int     `json:"warmup"`
	ValueLength int     `json:"value_length"`
	IntervalNs  int64   `json:"interval_ns"`
	OffsetsNs   []int64 `json:"offsets_ns,omitempty"`
	// DurationNs, when set, ends each connection's ops at T0+DurationNs
	// (no op due, or started in a closed loop, after it), at most
	// MaxOps each.
	DurationNs int64 `json:"duration_ns,omitempty"`
	MaxOps     int   `json:"max_ops,omitempty"`
	// Scenario is ScenarioConnect, or "" for lookups on the connections.
	Scenario string `json:"scenario,omitempty"`
}

// ConnResult is one connection's ops of a load: the latency of each
// from its start to its end, its schedule lag (its start minus its due
// time: open loop only), and the ops that failed.
type ConnResult struct {
	ID     string    `json:"id"`
	Ns     []int64   `json:"ns"`
	LagNs  []int64   `json:"lag_ns,omitempty"`
	Errors []OpError `json:"errors,omitempty"`
}

// LoadResult is the agent's answer to Load: one ConnResult per
// connection, in the order of Load.IDs.
type LoadResult struct {
	Type    string       `json:"type"`
	Results []ConnResult `json:"results"`
}

// Close asks the agent to close one connection.
type Close struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// ErrorMessage is an agent's answer to a request it could not do.
type ErrorMessage struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Message string `json:"message"`
}

// NewOpen is the Open of connection id on ep for target, carrying token;
// caPEM is the CA to trust on the tls path (ep.TLS names the server).
func NewOpen(id, target string, ep drivers.Endpoint, token, statement string, caPEM []byte) (Open, error) {
	if err := ep.Validate(); err != nil {
		return Open{}, fmt.Errorf("open %s for an agent: %w", id, err)
	}
	// The agent is given the route it dials: a control (tcp2) is the path
	// it repeats, to the agent and to the server alike.
	o := Open{Type: TypeOpen, ID: id, Target: target, Path: string(ep.Transport.Route()), Network: ep.Transport.Network(),
		Address: ep.Address, User: ep.User, Password: ep.Password, Database: ep.Database, Token: token, Statement: statement}
	if o.Network == "unix" {
		o.Socket = ep.Address
	} else if err := splitHostPort(&o); err != nil {
		return Open{}, err
	}
	if ep.Transport.Info().TLS {
		if len(caPEM) == 0 {
			return Open{}, fmt.Errorf("open %s on the tls path for an agent: no CA certificate to give it", id)
		}
		o.CAPEM = string(caPEM)
		o.ServerName = serverName(ep.TLS)
	}
	return o, nil
}

func serverName(c *tls.Config) string {
	if c == nil {
		return ""
	}
	return c.ServerName
}
