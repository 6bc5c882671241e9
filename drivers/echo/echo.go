// Package echo is dbsock's driver for its own echo server
// (internal/echoserver): a 4-byte ping-pong on a raw socket, the transport
// floor under the database numbers.
package echo

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/echoserver"
)

// Size is the message size of one ping-pong.
const Size = 4

// Driver is the echo driver. The zero value is ready to use.
type Driver struct{}

// New returns the echo driver.
func New() *Driver { return &Driver{} }

// Name implements drivers.Driver.
func (*Driver) Name() string { return "echo" }

// Describe implements drivers.Driver.
func (*Driver) Describe() string {
	return fmt.Sprintf("a %d-byte write and a %d-byte read on a raw socket to dbsock's echo server in a child process", Size, Size)
}

// Seed implements drivers.Driver; the echo server has nothing to seed.
func (*Driver) Seed(context.Context, drivers.Endpoint) error { return nil }

// Info implements drivers.Driver.
func (*Driver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{Product: "dbsock echo server", Detail: "Go net, one goroutine per connection"}, nil
}

// Open implements drivers.Driver.
func (*Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	nc, err := d.DialContext(ctx, string(ep.Transport), ep.Address)
	if err != nil {
		return nil, fmt.Errorf("connect to echo server over %s: %w", ep, err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	network, peer, err := echoserver.ReadGreeting(nc)
	_ = nc.SetReadDeadline(time.Time{})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("echo server over %s: %w", ep, err)
	}
	c := &Conn{nc: nc, network: network, peer: peer}
	copy(c.out[:], "ping")
	return c, nil
}

// Conn is one connection to the echo server.
type Conn struct {
	nc      net.Conn
	network string
	peer    string
	out     [Size]byte
	in      [Size]byte
}

// Do implements drivers.Conn: write Size bytes, read them back.
func (c *Conn) Do(context.Context) error {
	if _, err := c.nc.Write(c.out[:]); err != nil {
		return err
	}
	if _, err := io.ReadFull(c.nc, c.in[:]); err != nil {
		return err
	}
	if c.in != c.out {
		return fmt.Errorf("echo server returned %q, want %q", c.in[:], c.out[:])
	}
	return nil
}

// Verify implements drivers.Conn with the greeting the server sent on
// accept: its listener's network and the peer address it sees.
func (c *Conn) Verify(context.Context) (drivers.Verification, error) {
	t := drivers.Transport(c.network)
	if t != drivers.TCP && t != drivers.Unix {
		return drivers.Verification{}, fmt.Errorf("echo server reported unknown network %q", c.network)
	}
	return drivers.Verification{Transport: t, Evidence: "echo server sees " + c.network + " peer " + c.peer}, nil
}

// Close implements drivers.Conn.
func (c *Conn) Close() error { return c.nc.Close() }
