package child

// The ping-pong server behind dbsock's echo target: it echoes every byte
// it reads, on 127.0.0.1 TCP and on a Unix socket at once, and greets each
// client with the transport it sees (drivers/echo.Greeting), so the client
// can verify it server-side.

import (
	"errors"
	"fmt"
	"github.com/dbsock/dbsock/drivers/echo"
	"net"
)

// serveEcho accepts on l until it is closed, echoing on every connection.
func serveEcho(l net.Listener) error { return acceptLoop(l, handle) }

// acceptLoop accepts on l until it is closed, serving each connection with
// serve in a goroutine of its own.
func acceptLoop(l net.Listener, serve func(net.Conn)) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go serve(c)
	}
}

func handle(c net.Conn) {
	defer c.Close()
	network := c.LocalAddr().Network()
	peer := c.RemoteAddr().String()
	if peer == "" {
		peer = "@"
	}
	if _, err := c.Write(echo.Greeting(network, peer)); err != nil {
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

// listen opens both listeners: TCP on tcpAddr, Unix on unixPath.
func listen(tcpAddr, unixPath string) (tcp, unix net.Listener, err error) {
	tcp, err = net.Listen("tcp", tcpAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("echo server: listen tcp %s: %w", tcpAddr, err)
	}
	unix, err = net.Listen("unix", unixPath)
	if err != nil {
		tcp.Close()
		return nil, nil, fmt.Errorf("echo server: listen unix %s: %w", unixPath, err)
	}
	return tcp, unix, nil
}
