package drivers

import (
	"context"
	"net"
)

// DialIn dials addr on network from inside the network namespace netns (a
// file such as /proc/PID/ns/net), or from this process's own when netns
// is empty. The socket is made in netns and stays there: its traffic
// crosses that namespace's interfaces only, as a client in the container
// that owns it would send it.
func DialIn(ctx context.Context, netns, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if netns == "" {
		return d.DialContext(ctx, network, addr)
	}
	return dialInNetns(ctx, &d, netns, network, addr)
}

// SocketsFor is the Sockets a driver's connections to ep go through:
// dialed from ep's network namespace, where it has one.
func SocketsFor(ep Endpoint) *Sockets { return &Sockets{Netns: ep.Netns} }
