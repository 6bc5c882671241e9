// Package memcached is dbsock's memcached target: a GET of one key through
// github.com/bradfitz/gomemcache, which dials a server string containing
// "/" as a Unix socket and anything else as TCP.
//
// memcached serves a Unix socket only with TCP disabled (-s), so one
// process cannot serve both transports: dbsock starts two instances,
// started and pinned alike, one per transport, and the report says so.
package memcached

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// Key is the key of row 1, the one a one-row lookup reads (row id's key is
// drivers.KeyName(id)); Value is what every key holds.
const (
	Key   = "dbsock:user:1"
	Value = "dbsock"
)

// Driver is the memcached driver for one value size.
type Driver struct {
	valueSize int // 0: the 6-byte Value
	w         drivers.Workload
}

// New returns the memcached driver reading values of w.ValueSize bytes
// (Value when 0) from w.Rows keys.
func New(w drivers.Workload) *Driver { return &Driver{valueSize: w.ValueSize, w: w} }

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (*Driver) Mode() string { return "" }

// ValueSize implements drivers.Driver.
func (d *Driver) ValueSize() int {
	if d.valueSize == 0 {
		return len(Value)
	}
	return d.valueSize
}

func (d *Driver) value() []byte {
	if d.valueSize == 0 {
		return []byte(Value)
	}
	return bytes.Repeat([]byte("d"), d.valueSize)
}

// Describe implements drivers.Driver.
func (d *Driver) Describe() string {
	switch {
	case d.w.Query != "":
		return "`" + d.w.Query + "` (your own query), text protocol (one round trip per op)"
	case d.w.Op == drivers.OpMixed:
		return fmt.Sprintf("`get %s` or `incr %s:n 1`, text protocol (one round trip per op)", drivers.KeyText(d.w), drivers.KeyText(d.w))
	case d.w.Updates():
		return fmt.Sprintf("`incr %s:n 1`, text protocol (one round trip per op)", drivers.KeyText(d.w))
	}
	return fmt.Sprintf("`get %s` of a %d-byte value, text protocol (one round trip per op)", drivers.KeyText(d.w), d.ValueSize())
}

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string {
	return "connect, and the text protocol's authentication where the endpoint has a password (dbsock's own servers do)"
}

// User is the account of the servers dbsock starts (memcached -Y).
const User = "dbsock"

// authenticate logs nc in with ep's user and password, the way memcached's
// ASCII authentication (-Y, --auth-file) takes them: a set whose value is
// "user password". Nothing when ep has no password.
func authenticate(nc net.Conn, ep drivers.Endpoint) error {
	if ep.Password == "" {
		return nil
	}
	cred := ep.User + " " + ep.Password
	if _, err := fmt.Fprintf(nc, "set auth 0 0 %d\r\n%s\r\n", len(cred), cred); err != nil {
		return fmt.Errorf("authenticate to memcached over %s: %w", ep, err)
	}
	line, err := bufio.NewReaderSize(nc, 64).ReadString('\n')
	if err != nil {
		return fmt.Errorf("authenticate to memcached over %s: %w", ep, err)
	}
	if t := strings.TrimSpace(line); t != "STORED" {
		return fmt.Errorf("authenticate to memcached over %s: the server answered %q (is it started with -Y, and are the user and password its own?)", ep, t)
	}
	return nil
}

// dialAuth dials ep and authenticates, within ctx's deadline.
func dialAuth(ctx context.Context, ep drivers.Endpoint) (net.Conn, error) {
	nc, err := new(drivers.Sockets).DialTLS(ep.TLS)(ctx, ep.Transport.Network(), ep.Address)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if err := authenticate(nc, ep); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// NewClient is a gomemcache client of ep (one idle connection, a 10 s
// timeout) that makes each connection with dial and logs it in with ep's
// user and password (the text protocol's authentication, which gomemcache
// does not speak).
func NewClient(ep drivers.Endpoint, dial func(ctx context.Context, network, address string) (net.Conn, error)) *memcache.Client {
	c := memcache.New(ep.Address) // a socket path (it has a "/"), or HOST:PORT
	c.MaxIdleConns = 1
	c.Timeout = 10 * time.Second
	c.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if err := authenticate(nc, ep); err != nil {
			nc.Close()
			return nil, err
		}
		return nc, nil
	}
	return c
}

// client is a gomemcache client of one connection to ep; dialed, when set,
// receives each connection it makes, once logged in.
func client(ctx context.Context, ep drivers.Endpoint, socks *drivers.Sockets, dialed func(net.Conn)) *memcache.Client {
	c := NewClient(ep, drivers.KeepTrace(ctx, socks.DialTLS(ep.TLS))) // gomemcache dials with a context of its own
	if dialed != nil {
		login := c.DialContext
		c.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
			nc, err := login(ctx, network, address)
			if err == nil {
				dialed(nc)
			}
			return nc, err
		}
	}
	return c
}

// Seed implements drivers.Driver: it sets the key to a value of the
// driver's size, with no expiry.
// Keys are set seedBatch at a time, pipelined with noreply on one
// connection, each batch confirmed by a version command.
func (d *Driver) Seed(ctx context.Context, ep drivers.Endpoint) error {
	if !d.w.Seeds() {
		return nil
	}
	nc, err := dialAuth(ctx, ep)
	if err != nil {
		return err
	}
	defer nc.Close()
	value, rows := d.value(), d.w.RowCount()
	w := bufio.NewWriterSize(nc, 64<<10)
	for lo := 1; lo <= rows; lo += seedBatch {
		hi := min(lo+seedBatch-1, rows)
		for id := lo; id <= hi; id++ {
			fmt.Fprintf(w, "set %s 0 0 %d noreply\r\n", drivers.KeyName(int64(id)), len(value))
			w.Write(value)
			w.WriteString("\r\n")
			if d.w.Writes() {
				fmt.Fprintf(w, "set %s 0 0 1 noreply\r\n0\r\n", drivers.CounterName(int64(id)))
			}
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("seed memcached over %s: set keys %d to %d of %d: %w", ep, lo, hi, rows, err)
		}
		if line, err := command(nc, "version"); err != nil || !strings.HasPrefix(line, "VERSION") {
			return fmt.Errorf("seed memcached over %s: set keys %d to %d of %d: the server answered %q (%v)", ep, lo, hi, rows, strings.TrimSpace(line), err)
		}
		d.w.Report(hi)
	}
	return nil
}

// seedBatch is how many keys one seeding batch sets.
const seedBatch = 1000

// Info implements drivers.Driver: memcached's version command.
func (d *Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	nc, err := dialAuth(ctx, ep)
	if err != nil {
		return drivers.ServerInfo{}, err
	}
	defer nc.Close()
	line, err := command(nc, "version")
	if err != nil {
		return drivers.ServerInfo{}, fmt.Errorf("ask memcached over %s for its version: %w", ep, err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION ")
	if !ok {
		return drivers.ServerInfo{}, fmt.Errorf("ask memcached over %s for its version: it answered %q, not VERSION", ep, strings.TrimSpace(line))
	}
	return drivers.ServerInfo{Product: product, Version: v}, nil
}

// command sends one text-protocol command on nc and returns the reply up
// to its end: one line, or, for stats, every line through END.
func command(nc net.Conn, cmd string) (string, error) {
	if _, err := nc.Write([]byte(cmd + "\r\n")); err != nil {
		return "", err
	}
	r := bufio.NewReader(nc)
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return b.String(), err
		}
		b.WriteString(line)
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(cmd, "stats") || t == "END" || strings.HasSuffix(t, "ERROR") {
			return b.String(), nil
		}
	}
}

// Open implements drivers.Driver: one connection, made at once (with a
// version command) so that Verify can ask about it.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	c := &Conn{ep: ep, want: d.ValueSize(), w: d.w, reads: !d.w.Updates()}
	if d.w.Query != "" {
		c.pattern = strings.Fields(d.w.Query)[1] // CheckQuery made sure of "VERB PATTERN"
	}
	c.UseKeys(nil)
	c.socks = drivers.SocketsFor(ep)
	c.client = client(ctx, ep, c.socks, func(nc net.Conn) {
		c.mu.Lock()
		c.nc = nc
		c.mu.Unlock()
	})
	stop := c.socks.AbortWhenDone(ctx) // gomemcache's Ping waits by its own timeout
	err := c.client.Ping()
	if !stop() {
		c.client.Close()
		return nil, fmt.Errorf("connect to memcached over %s: the server did not answer: %w", ep, context.Cause(ctx))
	}
	if err != nil {
		c.client.Close()
		return nil, fmt.Errorf("connect to memcached over %s: %w", ep, err)
	}
	return c, nil
}

// Conn is one memcached connection (a gomemcache client that keeps one).
type Conn struct {
	socks  *drivers.Sockets
	ep     drivers.Endpoint
	client *memcache.Client
	want   int
	w      drivers.Workload
	reads  bool     // some ops read (all but --op update)
	names  []string // the keys the next reads read, named before timing
	counts []string // the counters the next writes increment
	// pattern is the key pattern of the user's command (--query), with
	// drivers.Placeholder for the key ("": dbsock's keys).
	pattern string
	mu      sync.Mutex
	nc      net.Conn // the connection the client made, for Verify
}

// Do implements drivers.Conn: one op on the first key.
func (c *Conn) Do(ctx context.Context) error { return c.DoKey(ctx, 0, false) }

// DoKey implements drivers.Keyed: one get of key i, or one incr.
func (c *Conn) DoKey(_ context.Context, i int, write bool) error {
	if c.socks.Aborted() {
		return drivers.ErrAborted
	}
	if !c.reads || write {
		key := c.counts[i]
		_, err := c.client.Increment(key, 1)
		if errors.Is(err, memcache.ErrCacheMiss) {
			return fmt.Errorf("memcached has no counter %s: the server lost the seeded value (restarted, or evicted it)", key)
		}
		return err
	}
	key := c.names[i]
	it, err := c.client.Get(key)
	if err != nil {
		if errors.Is(err, memcache.ErrCacheMiss) && c.pattern != "" {
			return fmt.Errorf("memcached get %s %w (no such key)", key, drivers.ErrNoResult)
		}
		if errors.Is(err, memcache.ErrCacheMiss) {
			return fmt.Errorf("memcached has no %s: the server lost the seeded value (restarted, or evicted it: memcached -m is 128 MB)", key)
		}
		return err
	}
	if c.pattern == "" && len(it.Value) != c.want {
		return fmt.Errorf("memcached get returned %d bytes, want %d", len(it.Value), c.want)
	}
	return nil
}

// UseKeys implements drivers.Keyed: the keys are named here, so that the
// timed ops format nothing (none: Key).
func (c *Conn) UseKeys(ids []int64) {
	if len(ids) == 0 {
		ids = []int64{1}
	}
	c.names, c.counts = c.names[:0], c.counts[:0]
	if c.pattern != "" {
		for _, id := range ids {
			c.names = append(c.names, drivers.Fill(c.pattern, c.w.Key(id)))
		}
		if !c.reads {
			c.counts = c.names
		}
		return
	}
	if c.reads {
		c.names = drivers.KeyNames(c.names, ids, false)
	}
	if c.w.Writes() {
		c.counts = drivers.KeyNames(c.counts, ids, true)
	}
}

// CheckQuery implements drivers.QueryTaker: "get PATTERN" reads, "incr
// PATTERN" (by one) writes, PATTERN holding {key}.
func (*Driver) CheckQuery(q, op string) error {
	verb := "get"
	if op == drivers.OpUpdate {
		verb = "incr"
	}
	f := strings.Fields(q)
	if len(f) != 2 || strings.ToLower(f[0]) != verb || !strings.Contains(f[1], drivers.Placeholder) {
		return setting.Err("%q: with %s %s give %q, e.g. %q", q, setting.Op, op, verb+" PATTERN", verb+" user:"+drivers.Placeholder)
	}
	return nil
}

// Verify implements drivers.Conn: "stats conns" sent on this very
// connection, between ops, lists every connection with its address; this
// one is the TCP connection from its local address, or the connection on
// the Unix listener that is running the command.
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	c.mu.Lock()
	nc := c.nc
	c.mu.Unlock()
	if nc == nil {
		return drivers.Verification{}, errors.New("stats conns: the client made no connection")
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
		defer nc.SetDeadline(time.Time{})
	}
	out, err := command(nc, "stats conns")
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("stats conns: %w", err)
	}
	v, err := ParseConns(out, nc.LocalAddr().String())
	if c.ep.Password != "" {
		v.Negotiated.Auth = "password (the text protocol's auth file, -Y: user and password in a set command)"
	}
	if err != nil || v.Transport.Secured() == v.Transport { // no TLS path over it
		return v, err
	}
	settings, err := command(nc, "stats settings")
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("stats settings: %w", err)
	}
	return OnTLSListener(v, settings, drivers.TLSOf(nc)), nil
}

// OnTLSListener is v (a TCP client found in stats conns) on the tls path
// when the server has TLS on (stats settings: ssl_enabled yes) and the
// client's connection to that listener is a TLS session n: memcached
// serves TLS on the listeners without "notls:", and none of them speaks
// plain text, nor a plain one TLS.
func OnTLSListener(v drivers.Verification, settings string, n drivers.Negotiated) drivers.Verification {
	enabled := strings.Contains(settings, "STAT ssl_enabled yes")
	switch {
	case enabled && !n.IsZero():
		v.Transport = v.Transport.Secured()
		v.Evidence += " (a TLS listener: stats settings ssl_enabled yes, and the client's TLS handshake on it succeeded)"
		v.Negotiated.TLSVersion, v.Negotiated.TLSCipher, v.Negotiated.TLSResumed = n.TLSVersion, n.TLSCipher, n.TLSResumed
	case enabled:
		v.Evidence += " (a plain listener: the server has TLS on, and this connection speaks plain text)"
	default:
		v.Evidence += " (stats settings: ssl_enabled no)"
	}
	return v
}

// ParseConns finds the connection that asked in a "stats conns" reply:
// over TCP the one whose addr is tcp:LOCAL or tcp6:[::1]:PORT (the
// client's own address);
// over a Unix socket the one on a unix: listener in state conn_parse_cmd.
func ParseConns(out, local string) (drivers.Verification, error) {
	conns := map[string]map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "STAT" {
			continue
		}
		id, key, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if conns[id] == nil {
			conns[id] = map[string]string{}
		}
		conns[id][key] = f[2]
	}
	for _, kv := range conns {
		if kv["addr"] == "tcp:"+local || kv["addr"] == "tcp6:"+local {
			return drivers.Verification{Transport: drivers.ClassifyPeer(local, false), Evidence: "stats conns: addr " + kv["addr"] + " on listener " + kv["listen_addr"], Peer: local}, nil
		}
	}
	// Through a proxy (a published port) the server sees the proxy's
	// address: the connection is then the one off loopback that is running
	// this very command (the others wait for theirs).
	for _, kv := range conns {
		if peer, ok := strings.CutPrefix(kv["addr"], "tcp:"); ok && drivers.Routed(peer) && kv["state"] == "conn_parse_cmd" {
			return drivers.Verification{Transport: drivers.ClassifyPeer(peer, false), Evidence: "stats conns: addr " + kv["addr"] + " (not this client's " + local + ": a proxy's) on listener " + kv["listen_addr"] + ", running this command", Peer: peer}, nil
		}
	}
	for _, kv := range conns {
		if strings.HasPrefix(kv["listen_addr"], "unix:") && kv["state"] == "conn_parse_cmd" {
			return drivers.Verification{Transport: drivers.ClassifyPeer("", false), Evidence: "stats conns: a client on listener " + kv["listen_addr"]}, nil
		}
	}
	return drivers.Verification{}, fmt.Errorf("stats conns lists no connection from %s and none on a Unix listener: is this memcached?", local)
}

// Close implements drivers.Conn.
func (c *Conn) Close() error { return c.client.Close() }

// Abort implements drivers.Aborter: the socket is closed under gomemcache,
// and no other is dialed.
func (c *Conn) Abort() error { return c.socks.Abort() }
