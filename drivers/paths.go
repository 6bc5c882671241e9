package drivers

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Transport is the kind of socket a client uses to reach a server.
type Transport string

// The transports dbsock measures. Network names the network each one's
// clients dial (Go's "tcp", "tcp6" and "unix").
const (
	TCP  Transport = "tcp"  // TCP on 127.0.0.1
	Unix Transport = "unix" // the server's Unix domain socket
	TCP6 Transport = "tcp6" // TCP on the IPv6 loopback, [::1]
	TLS  Transport = "tls"  // TCP on 127.0.0.1 with TLS (Endpoint.TLS)
	// Published is TCP to a port Docker publishes on 127.0.0.1 for a
	// server container on a bridge network (docker-proxy or NAT rules).
	Published Transport = "published"
	// Bridge is TCP to a server container's own address on a bridge
	// network dbsock created for the run.
	Bridge Transport = "bridge"
	// Service is TCP from a container on the run's bridge network to the
	// server container's address there, the one its name resolves to: a
	// compose application reaching its database by service name. The
	// client dials from inside that container's network namespace
	// (Endpoint.Netns).
	Service Transport = "service"
	// Pod is TCP on 127.0.0.1 inside the server container's own network
	// namespace: a sidecar or application container of the same
	// Kubernetes pod. The client dials from inside it (Endpoint.Netns).
	Pod Transport = "pod"
)

// Label is the transport's name for people: "TCP", "Unix", "TCP6" or "TLS".
func (t Transport) Label() string {
	switch t {
	case TCP:
		return "TCP"
	case Unix:
		return "Unix"
	case TCP6:
		return "TCP6"
	case TLS:
		return "TLS"
	case Published:
		return "Published port"
	case Bridge:
		return "Bridge"
	case Service:
		return "Service name"
	case Pod:
		return "Pod loopback"
	}
	return string(t)
}

// Network is the network a client dials for t, in Go's words: "tcp" for
// TLS (the handshake runs over it), else t itself.
func (t Transport) Network() string {
	switch t {
	case TLS, Published, Bridge, Service, Pod:
		return "tcp"
	}
	return string(t)
}

// AllPaths lists every path dbsock can measure, in the order --help
// names them.
var AllPaths = []Transport{TCP, Unix, TCP6, TLS, Published, Bridge, Service, Pod}

// IsPath says whether t is one of AllPaths.
func IsPath(t Transport) bool { return slices.Contains(AllPaths, t) }

// PathNames is AllPaths in words for an error: "tcp, unix, ... or pod".
func PathNames() string {
	names := make([]string, len(AllPaths))
	for i, t := range AllPaths {
		names[i] = string(t)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Transports lists both transports in their canonical order.
var Transports = [...]Transport{TCP, Unix}

// Endpoint is one way to reach a server: a transport, an address on it
// ErrMismatch is wrapped by CheckTransport when the server sees a different
// transport than the one the client asked for.
var ErrMismatch = errors.New("transport mismatch")

// CheckTransport runs c.Verify and fails unless the server reports ep's
// transport: a peer across a bridge for the published and bridge paths,
// the address of the container the client dialed from for the service
// path, a peer on the loopback of the server container's own namespace
// for the pod path.
func CheckTransport(ctx context.Context, c Conn, ep Endpoint) (Verification, error) {
	want := ep.Transport
	v, err := c.Verify(ctx)
	if err != nil {
		return v, fmt.Errorf("verify transport %s: %w", want, err)
	}
	switch {
	case v.Transport != TCP:
	case (want == Published || want == Bridge) && Routed(v.Peer):
		v.Transport = want // the server sees a peer across a bridge, not on loopback
	case want == Service && Routed(v.Peer) && (ep.From == "" || peerHost(v.Peer) == ep.From):
		v.Transport = want
	case want == Pod && !Routed(v.Peer):
		// The server container is on a bridge network only: a loopback
		// peer can only be a client inside its own namespace.
		v.Transport = want
	}
	if v.Transport != want {
		return v, fmt.Errorf("%w: connected over %s but the server reports %s (%s)", ErrMismatch, want, v.Transport, v.Evidence)
	}
	return v, nil
}

// Routed says whether peer ("IP", "IP:PORT", "IP/32", as a server prints
// a client) is an IPv4 address off the loopback: a client that reached the
// server across a bridge network (Docker's gateway, docker-proxy).
func Routed(peer string) bool {
	a, err := netip.ParseAddr(peerHost(peer))
	return err == nil && a.Is4() && !a.IsLoopback() && !a.IsUnspecified()
}

// peerHost is the IP of a peer as a server prints it ("IP", "IP:PORT",
// "IP/32").
func peerHost(peer string) string {
	host := peer
	if ap, err := netip.ParseAddrPort(peer); err == nil {
		host = ap.Addr().String()
	}
	host, _, _ = strings.Cut(host, "/")
	return host
}

// TransportOfPeer classifies a peer address as the server printed it:
// an IP:port is TCP (TCP6 for an IPv6 address), anything else (a path,
// "invalid AddrPort", "anonymous unix socket") is a Unix socket.
func TransportOfPeer(peer string) Transport {
	if ap, err := netip.ParseAddrPort(peer); err == nil && ap.IsValid() {
		return TransportOfIP(ap.Addr().String())
	}
	return Unix
}

// TransportOfIP is the TCP path of a client or listener address as a
// server prints it ("127.0.0.1", "::1", "[::1]", "::1/128"): TCP6 for an
// IPv6 address, TCP otherwise.
func TransportOfIP(ip string) Transport {
	ip, _, _ = strings.Cut(strings.Trim(ip, "[]"), "/")
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
		return TCP6
	}
	return TCP
}

// TransportOfHostPort is TransportOfIP of a "HOST:PORT" as a server
// prints it, brackets or not ("::1:5432", "[::1]:5432").
func TransportOfHostPort(hostPort string) Transport {
	i := strings.LastIndexByte(hostPort, ':')
	if i < 0 {
		return TransportOfIP(hostPort)
	}
	return TransportOfIP(hostPort[:i])
}
