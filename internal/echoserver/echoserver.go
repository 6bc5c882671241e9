// Package echoserver is the ping-pong server behind dbsock's "echo" target:
// it echoes every byte it reads, on 127.0.0.1 TCP and on a Unix socket at
// once, and greets each client with the transport it sees, so the client can
// verify it server-side. It runs in a child process (see MaybeRunChild) so
// that its work never shares the client's Go runtime.
package echoserver

import (
	"errors"
	"fmt"
	"io"
	"net"
)

// Greeting builds the greeting a server sends on accept: one length byte,
// then "<network> <peer>".
func Greeting(network, peer string) []byte {
	s := network + " " + peer
	if len(s) > 255 {
		s = s[:255]
	}
	return append([]byte{byte(len(s))}, s...)
}

// ReadGreeting reads a greeting written by Greeting.
func ReadGreeting(r io.Reader) (network, peer string, err error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", "", fmt.Errorf("read echo greeting: %w", err)
	}
	buf := make([]byte, n[0])
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", "", fmt.Errorf("read echo greeting: %w", err)
	}
	network, peer, _ = splitOnce(string(buf))
	return network, peer, nil
}

func splitOnce(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Serve accepts on l until it is closed, echoing on every connection.
func Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go handle(c)
	}
}

func handle(c net.Conn) {
	defer c.Close()
	network := c.LocalAddr().Network()
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

// Listen opens both listeners: TCP on tcpAddr, Unix on unixPath.
func Listen(tcpAddr, unixPath string) (tcp, unix net.Listener, err error) {
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
