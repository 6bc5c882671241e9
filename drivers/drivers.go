// Package drivers defines how dbsock talks to a server: an Endpoint names the
// transport (127.0.0.1 TCP or a Unix socket) as a first-class field, and each
// database has a Driver that maps it to its own client's configuration.
//
// A Conn performs one operation per call and never times itself: timing is
// the job of package scenarios, the only place in dbsock that measures.
//
// It is part of dbsock's own machinery, and its API may change between
// versions: programs that measure their own code use package dbsock.
package drivers

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// (host:port for TCP, a socket path for Unix), and credentials.
type Endpoint struct {
	Transport Transport `json:"network"`
	Address   string    `json:"address"`
	User      string    `json:"user,omitempty"`
	Password  string    `json:"-"`
	Database  string    `json:"database,omitempty"`
	// TLS is the client's TLS configuration on the tls path: the CA it
	// trusts and the name it checks (nil on every other path).
	TLS *tls.Config `json:"-"`
	// TLSTrust says in words what the client trusts on the tls path
	// ("the run's own CA", a CA file, or that it does not verify).
	TLSTrust string `json:"tls_trust,omitempty"`
	// TLSRoots are the certificates (PEM) of the CAs TLS trusts, nil when
	// it verifies nothing: what a client in another process (dbsock's
	// client container) builds the same TLS settings from (TLSFrom).
	TLSRoots []byte `json:"-"`
	// HasPassword says, in a report read back from JSON (which never
	// holds the password), that the endpoint had one.
	HasPassword bool `json:"has_password,omitempty"`
	// Netns, when set, is the network namespace the client dials from (a
	// file such as /proc/PID/ns/net, of a container dbsock started): the
	// service and pod paths. Empty: the client's own.
	Netns string `json:"netns,omitempty"`
	// From is the address the server must see this path's client at,
	// where dbsock knows it (the service path: the address of the
	// container whose namespace the client dials from).
	From string `json:"from,omitempty"`
	// Opening, when not 0, names one call of a library user's Opener
	// (dbsock.Compare): what dbsock.Dial dials for this endpoint is that
	// call's, counted and aborted with it.
	Opening uint64 `json:"-"`
	// Hop, when set, is the leg a hop in front of the server (a pooler
	// dbsock started) takes to the server behind it for this endpoint's
	// connections: checked with the client's own (PathInfo.Hop).
	Hop Transport `json:"hop,omitempty"`
}

// String renders the endpoint for humans; it never includes the password.
func (e Endpoint) String() string {
	s := string(e.Transport) + " " + e.Address
	if e.User != "" {
		s += " as " + e.User
		if e.Password != "" || e.HasPassword {
			s += " (password ****)"
		}
	}
	if e.Netns != "" {
		s += " from network namespace " + e.Netns
	}
	return s
}

// MarshalJSON writes the endpoint without its password, saying only
// whether it had one (has_password).
func (e Endpoint) MarshalJSON() ([]byte, error) {
	type plain Endpoint // without this method
	e.HasPassword = e.HasPassword || e.Password != ""
	return json.Marshal(plain(e))
}

// Validate checks that the endpoint is well formed, as its path's entry in
// PathTable says (PathInfo.Check; a control as the path it repeats): a TCP
// address is host:port with a numeric port, a Unix path is absolute and
// fits in sun_path.
func (e Endpoint) Validate() error {
	p := e.Transport.Route().Info()
	if p.Netns != (e.Netns != "") {
		return fmt.Errorf("%s address %q: the service and pod paths, and only they, are dialed from a container's network namespace", e.Transport, e.Address)
	}
	if p.Check == nil {
		return fmt.Errorf("unknown transport %q (want %s)", e.Transport, PathNames())
	}
	if p.TLS && e.TLS == nil {
		return fmt.Errorf("%s address %q has no TLS settings (a CA to trust)", e.Transport, e.Address)
	}
	return p.Check(e)
}

// CheckLoopback is PathInfo.Check for a path to a loopback IP literal at
// a port.
func CheckLoopback(e Endpoint) error {
	host, port, err := net.SplitHostPort(e.Address)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("tcp address %q is not HOST:PORT (e.g. 127.0.0.1:3306)", e.Address)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strings.ContainsAny(port, "+-") {
		return fmt.Errorf("tcp address %q: port %q is not a number from 1 to 65535", e.Address, port)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" || !ip.Unmap().IsLoopback() {
		return fmt.Errorf("tcp address %q is not a loopback address: dbsock compares TCP with a Unix socket on one host, "+
			"so it takes only 127.0.0.0/8 or [::1] as an IP literal (it never looks up a name or dials another host; for localhost give 127.0.0.1)", e.Address)
	}
	return nil
}

// checkLoopback6 is PathInfo.Check for the tcp6 path: [::1]:PORT.
func checkLoopback6(e Endpoint) error {
	host, port, err := net.SplitHostPort(e.Address)
	if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || ip != netip.IPv6Loopback() || port == "" {
		return fmt.Errorf("tcp6 address %q is not [::1]:PORT: the tcp6 path is the IPv6 loopback", e.Address)
	}
	return nil
}

// checkContainer is PathInfo.Check for a path to a container's address
// on a bridge network: a private IPv4:PORT.
func checkContainer(e Endpoint) error {
	ap, err := netip.ParseAddrPort(e.Address)
	if err != nil || !ap.Addr().Is4() || !ap.Addr().IsPrivate() {
		return fmt.Errorf("%s address %q is not a container's IPv4:PORT on a private network", e.Transport, e.Address)
	}
	return nil
}

// CheckSocket is PathInfo.Check for a Unix socket: an absolute path that
// fits in sun_path.
func CheckSocket(e Endpoint) error {
	if !strings.HasPrefix(e.Address, "/") {
		return fmt.Errorf("unix socket path %q is not absolute", e.Address)
	}
	if len(e.Address) > MaxSocketPath {
		return fmt.Errorf("unix socket path %q is %d bytes; the OS limit is %d (sun_path on %s): give the socket a shorter path, e.g. a directory under /tmp", e.Address, len(e.Address), MaxSocketPath, runtime.GOOS)
	}
	return nil
}

// Pair is the two endpoints of one server; either may be empty when not
// given. TLS, when given, is its tls path (a server the user runs).
type Pair struct {
	TCP  Endpoint
	Unix Endpoint
	TLS  Endpoint
}

// Given reports whether any endpoint address was given.
func (p Pair) Given() bool { return p.TCP.Address != "" || p.Unix.Address != "" }

// On returns the endpoint on transport t.
func (p Pair) On(t Transport) Endpoint {
	if t == Unix {
		return p.Unix
	}
	return p.TCP
}

// Paths are the routes to one server that a case measures, one endpoint
// each, in the order the report lists them.
type Paths []Endpoint

// Paths are the pair's two endpoints, TCP first.
func (p Pair) Paths() Paths { return Paths{p.TCP, p.Unix} }

// On returns the endpoint on transport t, if the paths hold one.
func (p Paths) On(t Transport) (Endpoint, bool) {
	for _, ep := range p {
		if ep.Transport == t {
			return ep, true
		}
	}
	return Endpoint{}, false
}

// NetworkHeader is the header (HTTP) or metadata key (gRPC) in which
// dbsock's own servers say which network they accepted a request on.
const NetworkHeader = "X-Dbsock-Network"

// ServerInfo names the server product really measured (a fork, or a server
// that speaks another product's protocol, is named as itself) and its
// version.
type ServerInfo struct {
	Product string `json:"product"`
	Version string `json:"version"`
	// Detail is what else the server said about itself, e.g. the version
	// of the protocol's original product that it claims compatibility
	// with.
	Detail string `json:"detail,omitempty"`
	// Instance names the server process, where the server can say it
	// (a run id, a data directory, a start time):
	// both endpoints of a run must reach the same one. "" when unknown.
	Instance string `json:"-"`
}

// String renders "Product Version".
func (s ServerInfo) String() string {
	if s.Version == "" {
		return s.Product
	}
	return s.Product + " " + s.Version
}

// Verification is what the server said about the connection it sees.
type Verification struct {
	// Transport is the transport the server reports for this connection:
	// TLS only when the server says the connection is encrypted.
	Transport Transport
	// Evidence is the server's own words, e.g. a process list's host
	// "localhost" or "127.0.0.1:51234".
	Evidence string
	// Negotiated is what the connection negotiated, where known.
	Negotiated Negotiated
	// Peer is the client's address as the server sees it ("IP:PORT" or
	// "IP"), where the driver reads one: on the published and bridge
	// paths it is the bridge network's side of the host, not loopback.
	Peer string
}

// Conn is one open client connection (a pool of one) to a seeded server.
type Conn interface {
	// Do performs one operation of the scenario (e.g. one primary-key lookup).
	// It must not log, print or time anything.
	Do(ctx context.Context) error
	// Verify asks the server which transport this very connection is on.
	Verify(ctx context.Context) (Verification, error)
	// Close releases the connection.
	Close() error
}

// Driver opens connections to one kind of server. A driver is configured
// for one case (mode, value size) when it is made.
type Driver interface {
	// Name is the target name, e.g. mysql.
	Name() string
	// Describe says in one sentence what one operation is, for the report.
	Describe() string
	// Mode names the driver setting that changes round trips ("" if none).
	Mode() string
	// ValueSize is the size in bytes of the value one op reads.
	ValueSize() int
	// ConnectPhase says what Open does, which the connect scenario times as
	// its connect phase.
	ConnectPhase() string
	// Seed creates the data the operation reads, through ep.
	Seed(ctx context.Context, ep Endpoint) error
	// Info asks the server for its product and version.
	Info(ctx context.Context, ep Endpoint) (ServerInfo, error)
	// Open opens one connection on ep, ready for Do.
	Open(ctx context.Context, ep Endpoint) (Conn, error)
}

// NetworkOf names the network of a listener's address as dbsock's own
// servers report it: "tcp6" for TCP on an IPv6 address, else Go's name
// ("tcp", "unix").
func NetworkOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && t.IP.To4() == nil && t.IP != nil {
		return string(TCP6)
	}
	return a.Network()
}

// Within runs step with a context that ends after limit, and returns by
// then even if step ignores its context (its goroutine is left to finish
// on its own): a server that accepts and never answers cannot hang the
// caller. When limit passes first the error wraps
// context.DeadlineExceeded.
func Within(ctx context.Context, limit time.Duration, step func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- step(sctx) }()
	select {
	case err := <-done:
		return err
	case <-sctx.Done():
		return sctx.Err()
	}
}

// ExecStats is the server's own cumulative account of the lookup command:
// how many it ran and the time it says it spent executing them.
type ExecStats struct {
	Calls  int64
	ExecNs float64
}

// ExecReader reads ExecStats over a connection of its own.
type ExecReader interface {
	Read(ctx context.Context) (ExecStats, error)
	Close() error
}

// ExecStatter is an optional capability of a Driver whose server reports
// its own per-command execution time (a key-value server's command
// statistics, ...):
// OpenExecStats opens a connection for reading it, and says where the
// figure comes from.
type ExecStatter interface {
	OpenExecStats(ctx context.Context, ep Endpoint) (ExecReader, string, error)
}

// Pipeliner is an optional capability of a Driver that can send a batch of
// lookups in one round trip: Pipeline returns the driver whose op is depth
// lookups sent together (a protocol's pipelining, or a SQL client's
// pipeline mode);
// Depth is the current driver's batch size (1: one lookup per op).
type Pipeliner interface {
	Pipeline(depth int) Driver
	Depth() int
}

// ThreadBound is an optional capability of a Conn whose ops make blocking
// system calls (no netpoller): the timing loop then runs it on a locked OS
// thread, as a C client would.
type ThreadBound interface{ ThreadBound() }

// Reach dials ep once and hangs up: it tells "nothing listens there" apart
// from a server that answers slowly, whatever a driver would make of it.
func Reach(ctx context.Context, ep Endpoint) error {
	c, err := DialIn(ctx, ep.Netns, ep.Transport.Network(), ep.Address)
	if err != nil {
		return err
	}
	return c.Close()
}

// BlockingFD returns a duplicate of c's descriptor in blocking mode: system
// calls on it block in the kernel instead of going through Go's netpoller.
func BlockingFD(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.Dup(int(s)) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Provenance says where a server came from and what makes its numbers
// what they are. Providers fill it in when they supply a server; the
// report carries the same value.
type Provenance struct {
	// Provider is the provider that supplied the server (local, docker,
	// compose, external).
	Provider string `json:"provider,omitempty"`
	// Origin says where the server came from, e.g. "local process
	// /usr/sbin/SERVER (pid 123)" or "external (already running)".
	Origin string `json:"origin,omitempty"`
	// Container servers: image reference and ID, network mode ("host" or
	// "published port") and the host directory bind-mounted as the
	// server's socket directory.
	Image       string `json:"image,omitempty"`
	ImageID     string `json:"image_id,omitempty"`
	NetworkMode string `json:"network_mode,omitempty"`
	SocketDir   string `json:"socket_dir,omitempty"`
	// RunsAs is the user the container's server ran as, as the host sees
	// its first process ("uid 999"), where the host can see it.
	RunsAs string `json:"runs_as,omitempty"`
	// Serving says what serves the two endpoints when it is more than one
	// server process (two instances of a server that serves one transport
	// per process; a pooler in front of a database).
	Serving string `json:"serving,omitempty"`
	// CPUGroup, when set, says that the server ran in another CPU cgroup
	// than the client (a container's), and what that does.
	CPUGroup string `json:"cpu_cgroup,omitempty"`
	// Warnings say what makes this server's numbers not comparable with a
	// native server's (e.g. TCP through Docker's port proxy).
	Warnings []string `json:"warnings,omitempty"`
}

// Layers of --explain's decomposition: the targets that measure them say
// so in the registry, and the report splits each p50 by them.
const (
	// LayerKernel is the kernel floor: a blocking-syscall ping-pong.
	LayerKernel = "kernel"
	// LayerRuntime is the same ping-pong through Go's netpoller.
	LayerRuntime = "runtime"
)

// Aborter is an optional capability of a Conn whose client library's own
// Close waits for the op in flight (database/sql does): Abort closes the
// sockets under it at once, so that an op blocked on a hung server fails
// now. The watchdog calls it; Close still follows.
type Aborter interface {
	Abort() error
}

// Sockets keeps the network connections a client library dials through
// Dial (or DialContext), so that Abort can close them under it.
type Sockets struct {
	// Netns is the network namespace to dial from (Endpoint.Netns), or
	// empty for this process's.
	Netns   string
	mu      sync.Mutex
	conns   []net.Conn
	aborted atomic.Bool // read by ops: no lock on the measured path
	tls     *tls.Conn   // the last TLS connection DialTLS made
}

// DialTLS is Dial for a client library that leaves TLS to its dialer
// (go-redis with a Dialer of its own, a raw protocol): it dials, runs the
// TLS handshake of cfg (none when cfg is nil) and keeps the session for
// Negotiated.
func (s *Sockets) DialTLS(cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := s.Dial(ctx, network, addr)
		if err != nil || cfg == nil {
			return c, err
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		TraceFrom(ctx).Secure()
		s.mu.Lock()
		s.tls = tc
		s.mu.Unlock()
		return tc, nil
	}
}

// Negotiated is the TLS session of the last connection DialTLS made, as
// the client sees it (zero without one).
func (s *Sockets) Negotiated() Negotiated {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tls == nil {
		return Negotiated{}
	}
	return TLSOf(s.tls)
}

// Dial dials like net.Dialer and keeps the connection; after Abort it
// refuses.
func (s *Sockets) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := DialIn(ctx, s.Netns, network, addr)
	if err != nil {
		return nil, err
	}
	TraceFrom(ctx).Dial()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted.Load() {
		c.Close()
		return nil, ErrAborted
	}
	s.conns = append(s.conns, c)
	return c, nil
}

// LocalAddr is the client's own address of the last connection dialed
// (nil before one): what a hop in front of the server (a proxy) lists
// the client's session by.
func (s *Sockets) LocalAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		return nil
	}
	return s.conns[len(s.conns)-1].LocalAddr()
}

// DialContext is Dial, for libraries that take a dialer value.
func (s *Sockets) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return s.Dial(ctx, network, addr)
}

// Aborted says whether Abort was called: a conn's op then fails at once
// instead of waiting for a server its library would look for again.
func (s *Sockets) Aborted() bool { return s.aborted.Load() }

// ErrAborted is an op's error after Abort.
var ErrAborted = errors.New("connection aborted: the server did not answer in time")

// AbortWhenDone closes s's connections once ctx is done, for a client
// library that logs in with a context of its own (go-redis, gomemcache),
// so that an open under ctx's deadline ends by it. Call stop when the open
// is done: it returns false when ctx ended first (the connections were
// closed, and the open must fail).
func (s *Sockets) AbortWhenDone(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = s.Abort() })
}

// Abort closes every connection dialed, and any dialed later.
func (s *Sockets) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted.Store(true)
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
	return nil
}
