package echo

// The ping-pong server behind dbsock's echo target: it echoes every byte
// it reads, on 127.0.0.1 TCP and on a Unix socket at once, and greets each
// client with the transport it sees (Greeting), so the client
// can verify it server-side.

import (
	"net"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply/child"
)

// serveEcho accepts on l until it is closed, echoing on every connection.
func serveEcho(l net.Listener) error { return child.AcceptLoop(l, handle) }

func handle(c net.Conn) {
	defer c.Close()
	network := drivers.NetworkOf(c.LocalAddr())
	peer := c.RemoteAddr().String()
	if peer == "" {
		peer = "@"
	}
	if _, err := c.Write(Greeting(network, peer)); err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
