package floor

// The ping-pong server behind dbsock's floor target: like echo, but each
// connection is served by blocking read and write system calls on its own
// locked OS thread, with no Go netpoller in the path, as a C server would.

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

// serveFloor accepts on l until it is closed.
func serveFloor(l net.Listener) error { return child.AcceptLoop(l, handleBlocking) }

// handleBlocking greets the client, then echoes with blocking system calls
// on a duplicate of the connection's descriptor.
func handleBlocking(c net.Conn) {
	defer c.Close()
	peer := c.RemoteAddr().String()
	if peer == "" {
		peer = "@"
	}
	if _, err := c.Write(echo.Greeting(drivers.NetworkOf(c.LocalAddr()), peer)); err != nil {
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
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		for off := 0; off < n; {
			w, err := unix.Write(fd, buf[off:n])
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				return
			}
			off += w
		}
	}
}
