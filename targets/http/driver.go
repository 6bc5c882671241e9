// Package http is dbsock's driver for its own minimal HTTP/1.1 server: one
// op is one GET with keep-alive on a kept connection.
package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	gohttp "net/http"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Driver is the HTTP driver. The zero value is ready to use.
type Driver struct{}

// New returns the HTTP driver.
func New() *Driver { return &Driver{} }

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (*Driver) Mode() string { return "" }

// ValueSize implements drivers.Driver: the response body "ok".
func (*Driver) ValueSize() int { return 2 }

// Describe implements drivers.Driver.
func (*Driver) Describe() string {
	return "`GET /` over HTTP/1.1 with keep-alive (net/http) to dbsock's HTTP server in a child process"
}

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string { return "connect" }

// Seed implements drivers.Driver; nothing to seed.
func (*Driver) Seed(context.Context, drivers.Endpoint) error { return nil }

// Info implements drivers.Driver.
func (*Driver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{Product: "dbsock HTTP server", Detail: "Go net/http, HTTP/1.1"}, nil
}

// Open implements drivers.Driver: it dials one connection, and the client
// sends every request on it.
func (*Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	nc, err := d.DialContext(ctx, ep.Transport.Network(), ep.Address)
	if err != nil {
		return nil, fmt.Errorf("connect to HTTP server over %s: %w", ep, err)
	}
	c := &Conn{nc: nc}
	c.client = &gohttp.Client{Transport: &gohttp.Transport{
		DialContext:         c.dial,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
	c.req, err = gohttp.NewRequest(gohttp.MethodGet, "http://dbsock/", nil)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// Conn is one HTTP connection.
type Conn struct {
	nc     net.Conn
	once   sync.Once
	client *gohttp.Client
	req    *gohttp.Request
	buf    [64]byte
}

// dial hands the transport the one pre-dialed connection; a second dial
// means the connection was lost, which is an error, not a silent reconnect
// that would change what is measured.
func (c *Conn) dial(context.Context, string, string) (net.Conn, error) {
	var nc net.Conn
	c.once.Do(func() { nc = c.nc })
	if nc == nil {
		return nil, errors.New("the HTTP connection was closed; dbsock does not reconnect in the middle of a run")
	}
	return nc, nil
}

// Do implements drivers.Conn: one GET, body read to the end.
func (c *Conn) Do(context.Context) error {
	resp, err := c.client.Do(c.req)
	if err != nil {
		return err
	}
	n, err := io.ReadFull(resp.Body, c.buf[:2])
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != gohttp.StatusOK || string(c.buf[:n]) != "ok" {
		return fmt.Errorf("HTTP GET / answered %s, %q (%v)", resp.Status, c.buf[:n], err)
	}
	return nil
}

// Verify implements drivers.Conn with the network the server reports in a
// response header.
func (c *Conn) Verify(context.Context) (drivers.Verification, error) {
	resp, err := c.client.Do(c.req)
	if err != nil {
		return drivers.Verification{}, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	network := resp.Header.Get(drivers.NetworkHeader)
	if network == "" {
		return drivers.Verification{}, fmt.Errorf("the HTTP server's reply has no %s header", drivers.NetworkHeader)
	}
	return drivers.Verification{Transport: drivers.Transport(network), Evidence: "HTTP server accepted the request on " + network}, nil
}

// Close implements drivers.Conn.
func (c *Conn) Close() error {
	c.client.CloseIdleConnections() // closes the connection the transport holds
	if err := c.nc.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
