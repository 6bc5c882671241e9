package echo

// The ping-pong server behind dbsock's echo target: it echoes every byte
// it reads, on 127.0.0.1 TCP and on a Unix socket at once, and greets each
// client with the transport it sees (Greeting), so the client
// can verify it server-side; another process's connection is verified
// through control frames (Registry).

import (
	"net"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/peercred"
	"github.com/dbsock/dbsock/supply/child"
)

// newServer is one echo server: its listeners share one Registry.
func newServer() child.Server {
	r := NewRegistry()
	return child.Server{Serve: func(l net.Listener) error {
		return child.AcceptLoop(l, func(c net.Conn) { handle(r, c) })
	}}
}

// Accept greets c with what the server sees of it and numbers it in r.
func Accept(r *Registry, c net.Conn) (Peer, error) {
	network := drivers.NetworkOf(c.LocalAddr())
	peer := c.RemoteAddr().String()
	if peer == "" {
		peer = "@"
	}
	if _, err := c.Write(Greeting(network, peer)); err != nil {
		return Peer{}, err
	}
	return r.Accepted(network, peer, peercred.PeerPID(c)), nil
}

func handle(r *Registry, c net.Conn) {
	defer c.Close()
	p, err := Accept(r, c)
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	data, forget, ok := r.Begin(p, buf, c.Read, func(b []byte) error { _, err := c.Write(b); return err })
	defer forget()
	if !ok {
		return
	}
	if _, err := c.Write(data); err != nil {
		return
	}
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
