// Package echo is dbsock's driver for its own echo server
// (internal/echoserver): a 4-byte ping-pong on a raw socket, the transport
// floor under the database numbers.
package echo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// Size is the default message size of one ping-pong.
const Size = 4

// Driver is the echo driver for one message size.
type Driver struct{ size int }

// New returns the echo driver sending messages of size bytes (Size when 0).
func New(size int) *Driver {
	if size == 0 {
		size = Size
	}
	return &Driver{size: size}
}

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (*Driver) Mode() string { return "" }

// ValueSize implements drivers.Driver.
func (d *Driver) ValueSize() int { return d.size }

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string { return "connect and read the server's greeting" }

// Describe implements drivers.Driver.
func (d *Driver) Describe() string {
	return fmt.Sprintf("a %d-byte write and a %d-byte read on a raw socket to dbsock's echo server in a child process", d.size, d.size)
}

// Seed implements drivers.Driver; the echo server has nothing to seed.
func (*Driver) Seed(context.Context, drivers.Endpoint) error { return nil }

// Info implements drivers.Driver.
func (*Driver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{Product: "dbsock echo server", Detail: "Go net, one goroutine per connection"}, nil
}

// Open implements drivers.Driver.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	dialer := net.Dialer{Timeout: 10 * time.Second}
	nc, err := dialer.DialContext(ctx, ep.Transport.Network(), ep.Address)
	if err != nil {
		return nil, fmt.Errorf("connect to echo server over %s: %w", ep, err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	network, peer, err := ReadGreeting(nc)
	_ = nc.SetReadDeadline(time.Time{})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("echo server over %s: %w", ep, err)
	}
	c := &Conn{nc: nc, network: network, peer: peer, out: make([]byte, d.size), in: make([]byte, d.size)}
	copy(c.out, "ping")
	return c, nil
}

// Conn is one connection to the echo server.
type Conn struct {
	nc      net.Conn
	network string
	peer    string
	out     []byte
	in      []byte
}

// bigMessage is the size above which a message is written from another
// goroutine while it is read back: socket buffers cannot hold it whole, and
// the server echoes as it reads.
const bigMessage = 32 << 10

// Do implements drivers.Conn: write the message, read it back.
func (c *Conn) Do(context.Context) error {
	if len(c.out) > bigMessage {
		werr := make(chan error, 1)
		go func() {
			_, err := c.nc.Write(c.out)
			werr <- err
		}()
		_, rerr := io.ReadFull(c.nc, c.in)
		if err := errors.Join(<-werr, rerr); err != nil {
			return err
		}
	} else {
		if _, err := c.nc.Write(c.out); err != nil {
			return err
		}
		if _, err := io.ReadFull(c.nc, c.in); err != nil {
			return err
		}
	}
	if c.in[0] != c.out[0] || c.in[len(c.in)-1] != c.out[len(c.out)-1] {
		return fmt.Errorf("echo server returned other bytes than it was sent")
	}
	return nil
}

// Verify implements drivers.Conn with the greeting the server sent on
// accept: its listener's network and the peer address it sees.
func (c *Conn) Verify(context.Context) (drivers.Verification, error) {
	t, ok := drivers.NetworkPath(c.network)
	if !ok {
		return drivers.Verification{}, fmt.Errorf("echo server reported unknown network %q", c.network)
	}
	return drivers.Verification{Transport: t, Evidence: "echo server sees " + c.network + " peer " + c.peer}, nil
}

// Close implements drivers.Conn.
func (c *Conn) Close() error { return c.nc.Close() }

// Greeting builds the greeting the echo server sends on accept: one length byte,
// then "<network> <peer>".
func Greeting(network, peer string) []byte { return frame(network + " " + peer) }

// frame is a server's frame of text: a length byte, then the text (cut at
// 255 bytes).
func frame(s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	return append([]byte{byte(len(s))}, s...)
}

// ReadGreeting reads a greeting written by Greeting.
func ReadGreeting(r io.Reader) (network, peer string, err error) {
	s, err := ReadFrame(r)
	if err != nil {
		return "", "", fmt.Errorf("read echo greeting: %w", err)
	}
	network, peer, _ = splitOnce(s)
	return network, peer, nil
}

// ReadFrame reads one of the server's frames (a greeting, or the answer to
// a control frame): a length byte and that many bytes of text.
func ReadFrame(r io.Reader) (string, error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", err
	}
	buf := make([]byte, n[0])
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

func splitOnce(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
