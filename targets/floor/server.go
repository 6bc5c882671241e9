package floor

// The ping-pong server behind dbsock's floor target: like echo, but each
// connection is served by blocking read and write system calls on its own
// locked OS thread, with no Go netpoller in the path, as a C server would.
// Another process's connection is verified as on echo's (echo.Registry):
// its control frames are read with the same blocking calls, before the
// ping-pong.

import (
	"errors"
	"net"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets/echo"
)

// newServer is one floor server: its listeners share one registry.
func newServer() child.Server {
	r := echo.NewRegistry()
	return child.Server{Serve: func(l net.Listener) error {
		return child.AcceptLoop(l, func(c net.Conn) { handleBlocking(r, c) })
	}}
}

// handleBlocking greets the client, then echoes with blocking system calls
// on a duplicate of the connection's descriptor.
func handleBlocking(r *echo.Registry, c net.Conn) {
	defer c.Close()
	p, err := echo.Accept(r, c)
	if err != nil {
		return
	}
	fd, err := drivers.BlockingFD(c)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 64<<10)
	data, forget, ok := r.Begin(p, buf, func(b []byte) (int, error) { return read(fd, b) }, func(b []byte) error { return writeAll(fd, b) })
	defer forget()
	if !ok || writeAll(fd, data) != nil {
		return
	}
	for {
		n, err := read(fd, buf)
		if err != nil || n == 0 {
			return
		}
		if writeAll(fd, buf[:n]) != nil {
			return
		}
	}
}

// read is one blocking read, again when a signal interrupts it.
func read(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return n, err
	}
}

// writeAll writes b with blocking writes.
func writeAll(fd int, b []byte) error {
	for off := 0; off < len(b); {
		w, err := unix.Write(fd, b[off:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		off += w
	}
	return nil
}
