// Package userop runs a library user's own operation as a drivers.Driver:
// it opens the op over an endpoint, checks that the op dialed that endpoint
// through dbsock.Dial (which records each connection here, by
// Endpoint.Opening), and has a driver of the server's own verify the
// endpoint on the server side. Package dbsock's Compare measures an op
// through it, and package dbsocktest's Benchmark opens one with Open.
package userop

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Opener is dbsock.Opener's signature: do performs one op, close releases
// what open made (it may be nil).
type Opener = func(ctx context.Context, ep drivers.Endpoint) (do func(context.Context) error, close func() error, err error)

// openings are the calls of Openers under way, by Endpoint.Opening: what
// Dial dialed for each, so that an op can be checked to have dialed its
// own endpoint and its sockets closed when the server stops answering.
var (
	openings    sync.Map // uint64 -> *opening
	lastOpening atomic.Uint64
)

// opening is one call of an Opener: the connections dialed for it.
type opening struct {
	mu     sync.Mutex
	dialed int
	conns  []net.Conn
}

// newOpening registers a new opening and tags ep with it.
func newOpening(ep drivers.Endpoint) (drivers.Endpoint, *opening) {
	ep.Opening = lastOpening.Add(1)
	o := &opening{}
	openings.Store(ep.Opening, o)
	return ep, o
}

func (o *opening) add(c net.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dialed++
	o.conns = append(o.conns, c)
}

func (o *opening) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dialed
}

// abort closes every connection dialed for the opening.
func (o *opening) abort() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.conns {
		c.Close()
	}
}

// Dialed records c as dialed for ep's opening, when ep is one an Opener
// was given (dbsock.Dial calls it for each connection it makes).
func Dialed(ep drivers.Endpoint, c net.Conn) {
	if ep.Opening == 0 {
		return
	}
	if o, ok := openings.Load(ep.Opening); ok {
		o.(*opening).add(c)
	}
}

// Driver is a user's op as a drivers.Driver: the server's own driver says
// what the server is and verifies each endpoint on the server side; the
// op's connections are checked to have dialed that endpoint.
type Driver struct {
	name    string
	open    Opener
	prepare func(ctx context.Context, ep drivers.Endpoint) error
	server  drivers.Driver
	ctx     context.Context // the caller's: the op's contexts end with it
}

// New is the op open, named name in the report, against a server whose
// own driver is server; prepare, when set, loads the user's data over an
// endpoint (Seed); the op's contexts end with ctx.
func New(ctx context.Context, name string, open Opener, prepare func(context.Context, drivers.Endpoint) error, server drivers.Driver) *Driver {
	return &Driver{name: name, open: open, prepare: prepare, server: server, ctx: ctx}
}

// Open opens open over ep of a server whose own driver is server, as
// dbsock.Compare does, and verifies it: it returns the op as a connection
// (a drivers.Aborter too) and the server's evidence of ep's path.
func Open(ctx context.Context, server drivers.Driver, ep drivers.Endpoint, open Opener) (drivers.Conn, string, error) {
	d := New(ctx, "benchmark", open, nil, server)
	conn, err := d.Open(ctx, ep)
	if err != nil {
		return nil, "", err
	}
	v, err := conn.Verify(ctx)
	if err != nil {
		conn.Close()
		return nil, "", fmt.Errorf("verify your op over %s: %w", ep, err)
	}
	return conn, v.Evidence, nil
}

// Name, Mode, ValueSize, ConnectPhase and Describe implement drivers.Driver.
func (d *Driver) Name() string         { return d.name }
func (d *Driver) Mode() string         { return "" }
func (d *Driver) ValueSize() int       { return 0 }
func (d *Driver) ConnectPhase() string { return "your Opener" }
func (d *Driver) Describe() string {
	return fmt.Sprintf("your op %q (dbsock.Compare), against the %s server", d.name, d.server.Name())
}

// Seed runs the prepare function (CompareOptions.Prepare), when set.
func (d *Driver) Seed(ctx context.Context, ep drivers.Endpoint) (err error) {
	if d.prepare == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("your Prepare over %s panicked: %v", ep, r)
		}
	}()
	if err := d.prepare(ctx, ep); err != nil {
		return fmt.Errorf("your Prepare over %s: %w", ep, err)
	}
	return nil
}

// Info is the server's own driver's answer.
func (d *Driver) Info(ctx context.Context, ep drivers.Endpoint) (drivers.ServerInfo, error) {
	return d.server.Info(ctx, ep)
}

// Open calls the Opener over ep, tagged so that dbsock.Dial records what
// it dials for this call.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (conn drivers.Conn, err error) {
	tagged, o := newOpening(ep)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("your Opener over %s panicked: %v", ep, r)
		}
		if err != nil {
			o.abort()
			openings.Delete(tagged.Opening)
		}
	}()
	do, closer, err := d.open(ctx, tagged)
	if err != nil {
		return nil, fmt.Errorf("your Opener over %s: %w", ep, err)
	}
	if do == nil {
		if closer != nil {
			closer()
		}
		return nil, fmt.Errorf("your Opener over %s returned no op (a nil do function and no error)", ep)
	}
	// The op's context ends with the caller's (Compare's ctx) and when
	// dbsock gives up on the server (Abort): the timed loop itself passes
	// one that never ends, so that no driver starts a cancellation
	// watcher per op.
	opCtx, cancel := context.WithCancel(d.ctx)
	return &opConn{d: d, ep: tagged, do: do, close: closer, opening: o, ctx: opCtx, cancel: cancel}, nil
}

// opConn is one opened op.
type opConn struct {
	d       *Driver
	ep      drivers.Endpoint
	do      func(context.Context) error
	close   func() error
	opening *opening
	ctx     context.Context
	cancel  context.CancelFunc
}

// Do runs your op once; a panic in it is this op's error, not the
// process's end.
func (c *opConn) Do(context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("your op panicked: %v", r)
		}
	}()
	return c.do(c.ctx)
}

// Abort implements drivers.Aborter: your op's context is cancelled and the
// connections it dialed through Dial are closed, so that an op blocked on
// a server that stopped answering returns now.
func (c *opConn) Abort() error {
	c.cancel()
	c.opening.abort()
	return nil
}

// closeLimit bounds your close function: one that blocks is left behind.
const closeLimit = 2 * time.Second

// Close runs your close function, for at most closeLimit.
func (c *opConn) Close() error {
	defer openings.Delete(c.ep.Opening)
	defer c.cancel()
	if c.close == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("your close function panicked: %v", r)
			}
		}()
		done <- c.close()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(closeLimit):
		c.opening.abort()
		return fmt.Errorf("your close function over %s did not return within %s; dbsock closed its connections and went on", c.ep, closeLimit)
	}
}

// Verify runs one op (a client may dial only when first used), checks that
// it dialed the endpoint through Dial, and verifies the endpoint on the
// server side with a connection of dbsock's own.
func (c *opConn) Verify(ctx context.Context) (drivers.Verification, error) {
	if err := c.do(ctx); err != nil {
		return drivers.Verification{}, fmt.Errorf("your op's first call: %w", err)
	}
	if c.opening.count() == 0 {
		return drivers.Verification{}, fmt.Errorf("your op made no connection through dbsock.Dial of the endpoint your Opener was given (%s), so dbsock cannot tell which transport it used: connect with the helper of your client's package in github.com/dbsock/dbsock/clients (dbsockpg.Config, dbsockmysql.Config, dbsockredis.Options, dbsockmongo.Options, dbsockmemcache.Client), or with dbsock.Dial in your client, from that endpoint", c.ep)
	}
	v, err := drivers.VerifyEndpoint(ctx, c.d.server, c.ep)
	if err != nil {
		return v, err
	}
	v.Evidence = fmt.Sprintf("your op dialed %s %s through dbsock.Dial; the server sees that endpoint as %s (%s)", c.ep.Transport, c.ep.Address, v.Transport.Label(), v.Evidence)
	return v, nil
}
