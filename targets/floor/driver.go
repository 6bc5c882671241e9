// Package floor is dbsock's driver for its kernel-floor server: the same
// 4-byte ping-pong as echo, but both sides use blocking read and write
// system calls on locked OS threads, with no Go netpoller in the path, so
// it measures what the kernel and scheduler alone cost, as a C program
// would. Beside echo (the same ping-pong through Go's runtime) it shows how
// much of a round trip is the Go client's.
package floor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets/echo"
)

// Driver is the floor driver.
type Driver struct{}

// New returns the floor driver.
func New() *Driver { return &Driver{} }

// Name implements drivers.Driver.
func (*Driver) Name() string { return name }

// Mode implements drivers.Driver.
func (*Driver) Mode() string { return "" }

// ValueSize implements drivers.Driver.
func (*Driver) ValueSize() int { return echo.Size }

// ConnectPhase implements drivers.Driver.
func (*Driver) ConnectPhase() string { return "connect and read the server's greeting" }

// Describe implements drivers.Driver.
func (*Driver) Describe() string {
	return "a 4-byte write and a 4-byte read with blocking system calls on a locked OS thread, to dbsock's floor server (the same, in a child process): the kernel's own cost"
}

// Seed implements drivers.Driver; there is nothing to seed.
func (*Driver) Seed(context.Context, drivers.Endpoint) error { return nil }

// Info implements drivers.Driver.
func (*Driver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{Product: "dbsock floor server", Detail: "blocking read/write system calls on a locked OS thread per connection"}, nil
}

// Open implements drivers.Driver: dial, read the greeting, then keep a
// blocking duplicate of the socket for the ops.
func (d *Driver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	dialer := net.Dialer{Timeout: 10 * time.Second}
	nc, err := dialer.DialContext(ctx, ep.Transport.Network(), ep.Address)
	if err != nil {
		return nil, fmt.Errorf("connect to floor server over %s: %w", ep, err)
	}
	defer nc.Close() // the blocking duplicate stays open
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	network, peer, err := echo.ReadGreeting(nc)
	if err != nil {
		return nil, fmt.Errorf("floor server over %s: %w", ep, err)
	}
	fd, err := drivers.BlockingFD(nc)
	if err != nil {
		return nil, fmt.Errorf("floor server over %s: %w", ep, err)
	}
	return &Conn{fd: fd, network: network, peer: peer, out: []byte("ping"), in: make([]byte, echo.Size)}, nil
}

// Conn is one connection to the floor server.
type Conn struct {
	fd            int
	network, peer string
	out, in       []byte
}

// ThreadBound implements drivers.ThreadBound.
func (*Conn) ThreadBound() {}

// Do implements drivers.Conn: one blocking write, blocking reads until the
// message is back.
func (c *Conn) Do(context.Context) error {
	for {
		_, err := unix.Write(c.fd, c.out)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	for got := 0; got < len(c.in); {
		n, err := unix.Read(c.fd, c.in[got:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("floor server closed the connection: %w", syscall.ECONNRESET)
		}
		got += n
	}
	return nil
}

// Verify implements drivers.Conn with the server's greeting.
func (c *Conn) Verify(context.Context) (drivers.Verification, error) {
	t, ok := drivers.NetworkPath(c.network)
	if !ok {
		return drivers.Verification{}, fmt.Errorf("floor server reported unknown network %q", c.network)
	}
	return drivers.Verification{Transport: t, Evidence: "floor server sees " + c.network + " peer " + c.peer}, nil
}

// Close implements drivers.Conn. A blocked op returns with an error once
// the descriptor is shut down (the watchdog's way of ending a hung op).
func (c *Conn) Close() error {
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return unix.Close(c.fd)
}

// OpenFinder implements drivers.ConnFinder as echo's does: another
// process's connection says its token in a hello frame before its first
// message, and dbsock's own connection asks the floor server for it.
func (*Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	return echo.DialFinder(ctx, admin, "floor server")
}

// AgentOp implements drivers.AgentOp: an agent's op is the ping-pong of
// one message of echo.Size bytes (the key is its size), with blocking
// calls.
func (*Driver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Family: "pingpong", Key: func(int64) any { return int64(echo.Size) }}
}
