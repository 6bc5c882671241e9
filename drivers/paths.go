package drivers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
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
	// TCPHopTCP and UnixHopTCP are routes through a hop, a pooler in front
	// of the server: the client's leg to the hop over 127.0.0.1
	// TCP or the hop's socket, and the hop's leg to the server behind it
	// over 127.0.0.1 TCP. On tcp and unix such a hop reaches its server
	// over the server's socket, so that the four routes of two legs are
	// tcp-tcp, unix-tcp, tcp and unix.
	TCPHopTCP  Transport = "tcp-tcp"
	UnixHopTCP Transport = "unix-tcp"
)

// PathInfo is what dbsock knows about one path. PathTable is the one table of
// them: every name, label, network, route, validation and server-side
// lookup reads it, so adding a path is an entry here (plus the supply
// layer's route to it where it is not a loopback address of the server's
// own listener).
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
	// Host is the loopback address its clients dial at the server's TCP
	// port, for a path to the server's own listener there ("127.0.0.1",
	// "::1"): a server dbsock starts listens on every Host of the table
	// (Hosts). With TLS, the host of the server's TLS listener.
	Host string
	// TLS says its clients run TLS over Network, verifying the server's
	// certificate (Endpoint.TLS).
	TLS bool
	// Repeats, when set, makes the path an A/A control: the route of the
	// path it names again, over connections of its own. The supply layer
	// serves it with that path's endpoint, the server sees that path's
	// transport, and the reports label it a control, where a verdict other
	// than no difference is noise: the run's own false-positive rate.
	Repeats Transport
	// Seen, when set, is the path a server sees a connection on this one
	// as, where it cannot tell them apart (a loopback address whose
	// connections leave from 127.0.0.1 is tcp to the server).
	Seen Transport
	// Hop, when set, is the leg a hop in front of the server (a pooler)
	// takes to the server behind it on this path; the client's leg is
	// Seen. Only a target with a hop serves such a path, and it checks the
	// hop's leg from both ends.
	Hop Transport
	// Agent says an agent (a client stack's process) dials it itself,
	// from this host.
	Agent bool
	// Docker says it runs through Docker's networks, to a second
	// container of the server on a bridge network: only the docker and
	// compose providers serve it.
	Docker bool
	// Netns says its clients dial from inside a container's network
	// namespace (Endpoint.Netns).
	Netns bool
	// Neighbour says that namespace is another container's on the
	// server's network (Endpoint.From), which the provider starts.
	Neighbour bool
	// Peer, when set, says whether a client the server sees as tcp at peer
	// (as the server prints it) came over this path to ep: a peer across a
	// bridge, the client container's own address, or a loopback peer in
	// the server container's namespace.
	Peer func(peer string, ep Endpoint) bool
	// Check says whether an endpoint's address is one of this path's
	// (Endpoint.Validate).
	Check func(Endpoint) error
	// Absent is why a server has no endpoint on it, when its provider
	// says nothing more.
	Absent string
}

// PathTable is every path dbsock can measure, in the order --help names them
// and the reports list them.
var PathTable = []PathInfo{
	{Path: TCP, Label: "TCP", Title: "TCP", Phrase: "127.0.0.1 TCP", Help: "127.0.0.1, the one the others are compared with unless --baseline names another",
		Network: "tcp", Host: "127.0.0.1", Agent: true, Check: CheckLoopback},
	{Path: Unix, Label: "Unix", Title: "Unix", Phrase: "the server's Unix socket", Help: "its socket", Network: "unix", Agent: true, Check: CheckSocket},
	{Path: TCP6, Label: "TCP6", Title: "TCP6 ([::1])", Phrase: "TCP6 ([::1])", Help: "[::1], the IPv6 loopback",
		Network: "tcp6", Host: "::1", Agent: true, Check: checkLoopback6, Absent: "its server listens on 127.0.0.1 only"},
	{Path: TLS, Label: "TLS", Title: "TLS (127.0.0.1)", Phrase: "TLS over 127.0.0.1 TCP", Help: "127.0.0.1 with TLS, the client verifying the server's certificate",
		Network: "tcp", Host: "127.0.0.1", TLS: true, Agent: true, Check: CheckLoopback, Absent: "dbsock does not start it with TLS"},
	{Path: Published, Label: "Published port", Title: "published port (127.0.0.1)", Phrase: "a port Docker publishes on 127.0.0.1",
		Help:    "--provider docker or compose: the port Docker publishes on 127.0.0.1 for a second container of the server on a bridge network",
		Network: "tcp", Docker: true, Agent: true, Peer: acrossBridge, Check: CheckLoopback, Absent: noRoutes},
	{Path: Bridge, Label: "Bridge", Title: "bridge (container address)", Phrase: "the container's address on a bridge network",
		Help: "that container's own address on the network, from the host", Network: "tcp", Docker: true, Agent: true, Peer: acrossBridge, Check: checkContainer, Absent: noRoutes},
	{Path: Service, Label: "Service name", Title: "service (from a container on its network)", Phrase: "its address from another container on that network",
		Help:    "that address from another container on the network, as a compose application reaches it by name",
		Network: "tcp", Docker: true, Netns: true, Neighbour: true, Peer: fromContainer, Check: checkContainer, Absent: noRoutes},
	{Path: Pod, Label: "Pod loopback", Title: "pod (127.0.0.1 in its namespace)", Phrase: "127.0.0.1 inside its container's network namespace",
		Help:    "127.0.0.1 inside that container's network namespace, as a sidecar of the same pod",
		Network: "tcp", Docker: true, Netns: true, Peer: inNamespace, Check: CheckLoopback, Absent: noRoutes},
	{Path: TCP2, Label: "TCP2", Title: "TCP2 (127.0.0.1 again)", Phrase: "127.0.0.1 TCP again on connections of its own (an A/A control)",
		Help:    "an A/A control: 127.0.0.1 TCP again, on connections of its own, compared with tcp like any path; a winner there is noise",
		Network: "tcp", Repeats: TCP},
	{Path: TCPHopTCP, Label: "TCP, hop TCP", Title: "TCP, hop on TCP", Phrase: "127.0.0.1 TCP to the hop, which reaches the server over 127.0.0.1 TCP",
		Help:    "a target with a hop in front of its server (--via): 127.0.0.1 TCP to the hop, and the hop to the server over 127.0.0.1 TCP (on tcp and unix, over the server's socket)",
		Network: "tcp", Seen: TCP, Hop: TCP, Agent: true, Check: CheckLoopback, Absent: noHop},
	{Path: UnixHopTCP, Label: "Unix, hop TCP", Title: "Unix, hop on TCP", Phrase: "the hop's Unix socket, the hop reaching the server over 127.0.0.1 TCP",
		Help:    "a target with a hop in front of its server (--via): the hop's socket, and the hop to the server over 127.0.0.1 TCP",
		Network: "unix", Seen: Unix, Hop: TCP, Agent: true, Check: CheckSocket, Absent: noHop},
}

// noHop is why a server has no endpoint on a path with a hop's leg.
const noHop = "only a target with a hop in front of its server serves it, started by dbsock on this host (--via, --provider local)"

// noRoutes is why a provider serves no path through Docker's networks.
const noRoutes = "only the docker and compose providers serve it (a second container of the server on a bridge network)"

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

// Seen is the path a server sees a connection on t as: the path a control
// repeats, or PathInfo.Seen, else t itself.
func (t Transport) Seen() Transport {
	p := t.Info()
	return cmp.Or(p.Seen, p.Repeats, t)
}

// Secured is the path a server sees a connection on t as when the server
// says the session is encrypted: the table's TLS path over t's network
// and host (tcp's is tls), else t itself.
func (t Transport) Secured() Transport {
	p := t.Info()
	for _, q := range PathTable {
		if q.TLS && q.Network == p.Network && q.Host == p.Host && !p.TLS && p.Seen == "" && p.Repeats == "" {
			return q.Path
		}
	}
	return t
}

// ClassifyPeer is the path a server's view of a client shows: peer is
// the client's address as the server prints it ("127.0.0.1",
// "127.0.0.1:5432", "[::1]:5432", "::1/128", "HOST:PORT"), or anything
// else ("", a socket path, "unix", "localhost") for a client on its Unix
// socket; secure when the server says the session is encrypted. It is
// the table's first path of the peer's network that is its own view
// (Seen), not a control and not through Docker's networks (CheckTransport
// tells those apart by the peer).
func ClassifyPeer(peer string, secure bool) Transport {
	network := "unix"
	if ip, ok := peerIP(peer); ok {
		network = "tcp"
		if ip.Is6() && !ip.Is4In6() {
			network = "tcp6"
		}
	}
	t, _ := NetworkPath(network)
	if secure {
		return t.Secured()
	}
	return t
}

// NetworkPath is the path a server's own listener on network ("tcp",
// "tcp6", "unix") is: the table's first of that network that is its own
// view (Seen), not a control, not TLS and not through Docker's networks;
// false for a network no path dials.
func NetworkPath(network string) (Transport, bool) {
	for _, p := range PathTable {
		if p.Network == network && p.Seen == "" && p.Repeats == "" && !p.Docker && !p.TLS {
			return p.Path, true
		}
	}
	return Transport(network), false
}

// peerIP is the IP of a client as a server prints it, when it is one;
// a "HOST:PORT" with a numeric port and a host that is no IP literal is
// a TCP client too (the unspecified address stands for it).
func peerIP(peer string) (netip.Addr, bool) {
	if strings.HasPrefix(peer, "/") {
		return netip.Addr{}, false // a socket path, maybe with Redis's ":0"
	}
	if a, err := netip.ParseAddr(strings.Trim(peerHost(peer), "[]")); err == nil {
		return a, true
	}
	if i := strings.LastIndexByte(peer, ':'); i > 0 {
		if a, err := netip.ParseAddr(strings.Trim(peer[:i], "[]")); err == nil {
			return a, true
		}
		if _, err := strconv.Atoi(peer[i+1:]); err == nil {
			return netip.IPv4Unspecified(), true
		}
	}
	return netip.Addr{}, false
}

// Endpoints are a server's endpoints keyed by path: each present, or
// absent with the reason it is absent.
type Endpoints map[Transport]PathEndpoint

// PathEndpoint is a server's entry for one path: its endpoint, or why it
// has none (Absent, an error that may name a setting).
type PathEndpoint struct {
	Endpoint
	Absent error
}

// DockerPaths are the table's paths through Docker's networks.
func DockerPaths() []Transport {
	var paths []Transport
	for _, p := range PathTable {
		if p.Docker {
			paths = append(paths, p.Path)
		}
	}
	return paths
}

// SocketAt is an endpoint on the Unix socket at path (the table's unix
// path), with no account.
func SocketAt(path string) Endpoint {
	t, _ := NetworkPath("unix")
	return Endpoint{Transport: t, Address: path}
}

// Hosts are the loopback addresses a server dbsock starts listens on for
// TCP: every PathInfo.Host of the table, once each, in its order.
func Hosts() []string {
	var hosts []string
	for _, p := range PathTable {
		if p.Host != "" && !slices.Contains(hosts, p.Host) {
			hosts = append(hosts, p.Host)
		}
	}
	return hosts
}

// AllPaths lists every path dbsock can measure, in the order --help
// names them: PathTable's names.
var AllPaths = func() []Transport {
	names := make([]Transport, len(PathTable))
	for i, p := range PathTable {
		names[i] = p.Path
	}
	return names
}()

// IsPath says whether t is a path of PathTable.
func IsPath(t Transport) bool {
	return slices.ContainsFunc(PathTable, func(p PathInfo) bool { return p.Path == t })
}

// PathNames is PathTable's paths in words for an error: "tcp, unix, ...
// or tcp2".
func PathNames() string {
	names := make([]string, len(PathTable))
	for i, p := range PathTable {
		names[i] = string(p.Path)
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
// path: the path the server sees it as (Transport.Seen), or a tcp client
// whose peer address PathInfo.Peer says came over it (a peer across a
// bridge, the client container's address, a loopback peer in the server
// container's own namespace).
func CheckTransport(ctx context.Context, c Conn, ep Endpoint) (Verification, error) {
	want := ep.Transport
	v, err := c.Verify(ctx)
	if err != nil {
		return v, fmt.Errorf("verify transport %s: %w", want, err)
	}
	v = v.On(ep)
	if v.Transport != want {
		return v, fmt.Errorf("%w: connected over %s but the server reports %s (%s)", ErrMismatch, want, v.Transport, v.Evidence)
	}
	return v, nil
}

// On is v as a connection on ep's path: v with ep's transport when what
// the server reports is what that path's connections look like to it
// (the path its control repeats, or a peer its table entry accepts), else
// v as it is.
func (v Verification) On(ep Endpoint) Verification {
	want := ep.Transport
	if p := want.Info(); v.Transport == want.Seen() || (p.Peer != nil && v.Transport == TCP && p.Peer(v.Peer, ep)) {
		v.Transport = want
	}
	return v
}

// acrossBridge: the server sees a peer across a bridge, not on loopback
// (the published and bridge paths).
func acrossBridge(peer string, _ Endpoint) bool { return Routed(peer) }

// fromContainer: the server sees the address of the container the client
// dialed from (the service path).
func fromContainer(peer string, ep Endpoint) bool {
	return Routed(peer) && (ep.From == "" || peerHost(peer) == ep.From)
}

// inNamespace: the server container is on a bridge network only, so a
// loopback peer can only be a client inside its own namespace (the pod
// path).
func inNamespace(peer string, _ Endpoint) bool { return !Routed(peer) }

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
