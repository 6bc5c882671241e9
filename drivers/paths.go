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
	// TCP2 is TCP on 127.0.0.1 again, over connections of its own: an A/A
	// control, the same route as TCP, so that a run shows its own false
	// positives beside the effects it measures.
	TCP2 Transport = "tcp2"
)

// PathInfo is what dbsock knows about one path. PathTable is the one table of
// them: every name, label and network lookup reads it, so adding a path is
// an entry here (plus the supply layer's route to it where it needs one,
// and each target's server-side check where the server sees it apart).
type PathInfo struct {
	Path Transport
	// Label names it in a column, a legend or a ratio: "TCP", "Unix".
	Label string
	// Title names it in a table's row: "TCP6 ([::1])".
	Title string
	// Phrase names it in a sentence that lists a run's paths.
	Phrase string
	// Help says what it is, for --paths' help: "[::1], the IPv6 loopback".
	Help string
	// Network is what its clients dial, in Go's words: "tcp", "tcp6" or
	// "unix".
	Network string
	// Repeats, when set, makes the path an A/A control: the route of the
	// path it names again, over connections of its own. The supply layer
	// serves it with that path's endpoint, the server sees that path's
	// transport, and the reports label it a control, where a verdict other
	// than no difference is noise: the run's own false-positive rate.
	Repeats Transport
}

// PathTable is every path dbsock can measure, in the order --help names them
// and the reports list them.
var PathTable = []PathInfo{
	{Path: TCP, Label: "TCP", Title: "TCP", Phrase: "127.0.0.1 TCP", Help: "127.0.0.1, the one the others are compared with unless --baseline names another", Network: "tcp"},
	{Path: Unix, Label: "Unix", Title: "Unix", Phrase: "the server's Unix socket", Help: "its socket", Network: "unix"},
	{Path: TCP6, Label: "TCP6", Title: "TCP6 ([::1])", Phrase: "TCP6 ([::1])", Help: "[::1], the IPv6 loopback", Network: "tcp6"},
	{Path: TLS, Label: "TLS", Title: "TLS (127.0.0.1)", Phrase: "TLS over 127.0.0.1 TCP", Help: "127.0.0.1 with TLS, the client verifying the server's certificate", Network: "tcp"},
	{Path: Published, Label: "Published port", Title: "published port (127.0.0.1)", Phrase: "a port Docker publishes on 127.0.0.1",
		Help: "--provider docker or compose: the port Docker publishes on 127.0.0.1 for a second container of the server on a bridge network", Network: "tcp"},
	{Path: Bridge, Label: "Bridge", Title: "bridge (container address)", Phrase: "the container's address on a bridge network",
		Help: "that container's own address on the network, from the host", Network: "tcp"},
	{Path: Service, Label: "Service name", Title: "service (from a container on its network)", Phrase: "its address from another container on that network",
		Help: "that address from another container on the network, as a compose application reaches it by name", Network: "tcp"},
	{Path: Pod, Label: "Pod loopback", Title: "pod (127.0.0.1 in its namespace)", Phrase: "127.0.0.1 inside its container's network namespace",
		Help: "127.0.0.1 inside that container's network namespace, as a sidecar of the same pod", Network: "tcp"},
	{Path: TCP2, Label: "TCP2", Title: "TCP2 (127.0.0.1 again)", Phrase: "127.0.0.1 TCP again on connections of its own (an A/A control)",
		Help: "an A/A control: 127.0.0.1 TCP again, on connections of its own, compared with tcp like any path; a winner there is noise", Network: "tcp", Repeats: TCP},
}

// Info is t's entry in PathTable; a path dbsock does not know is named by
// itself and dialed as t.
func (t Transport) Info() PathInfo {
	for _, p := range PathTable {
		if p.Path == t {
			return p
		}
	}
	return PathInfo{Path: t, Label: string(t), Title: string(t), Phrase: string(t), Network: string(t)}
}

// Label is the path's name for people: "TCP", "Unix", "TCP6", "TLS".
func (t Transport) Label() string { return t.Info().Label }

// Network is the network a client dials for t, in Go's words: "tcp" for
// TLS (the handshake runs over it) and every path over TCP.
func (t Transport) Network() string { return t.Info().Network }

// Route is the path whose route t takes: the path a control repeats, else
// t itself. The supply layer serves t with Route's endpoint, and a server
// sees a connection on t as one on Route.
func (t Transport) Route() Transport {
	if r := t.Info().Repeats; r != "" {
		return r
	}
	return t
}

// Control says whether t is an A/A control (PathInfo.Repeats).
func (t Transport) Control() bool { return t.Info().Repeats != "" }

// AllPaths lists every path dbsock can measure, in the order --help
// names them: PathTable's names.
var AllPaths = func() []Transport {
	names := make([]Transport, len(PathTable))
	for i, p := range PathTable {
		names[i] = p.Path
	}
	return names
}()

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
	case v.Transport == want.Route():
		v.Transport = want // a control: the server sees the path it repeats
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
