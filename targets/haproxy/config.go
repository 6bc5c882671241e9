package haproxy

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// One HAProxy in TCP mode stands in front of one server: a frontend for
// each of the four routes of two legs, named as its path (tcp-tcp,
// unix-tcp, tcp, unix), listening where the client's leg of the path
// names (127.0.0.1 TCP or a socket in HAProxy's private directory), each
// sending its connections to the backend of its hop's leg: backend tcp to
// the server's 127.0.0.1 TCP address, backend unix to its Unix socket.
// HAProxy in TCP mode relays bytes: it never sees a password, and its
// configuration holds none.

// frontend is one of HAProxy's listeners: the path it serves, and the
// address it binds (127.0.0.1:PORT, or a socket path).
type frontend struct {
	path drivers.Transport
	bind string
}

// layout is one HAProxy's configuration: its frontends, the server's two
// addresses its backends reach, and its stats socket.
type layout struct {
	frontends []frontend
	tcp, unix string // backends tcp and unix: the server's 127.0.0.1:PORT and its socket (address)
	stats     string // HAProxy's stats socket (mode 0600)
}

// hopOf is the leg from HAProxy to the server that path names, and the
// backend of its frontend: tcp-tcp and unix-tcp name TCP, tcp and unix
// (tcp-unix, unix-unix) the socket.
func hopOf(path drivers.Transport) drivers.Transport {
	if h := path.Info().Hop; h != "" {
		return h
	}
	return drivers.Unix
}

// config is haproxy.cfg for l: the stats socket, TCP mode, a frontend per
// path and the two backends. Timeouts are long: a connection the run
// keeps idle between blocks must not be closed under it.
func config(l layout) (string, error) {
	if l.tcp == "" || l.unix == "" || l.stats == "" {
		return "", fmt.Errorf("haproxy: a configuration needs the server's TCP address and socket and a stats socket (got %q, %q, %q)", l.tcp, l.unix, l.stats)
	}
	lines := []string{
		"global",
		"  stats socket " + l.stats + " mode 600 level operator",
		"  maxconn 4096",
		"  hard-stop-after 1s", // a soft stop (SIGUSR1, its container's stop signal) ends within it
		"defaults",
		"  mode tcp",
		"  timeout connect 5s",
		"  timeout client 1h",
		"  timeout server 1h",
	}
	for _, f := range l.frontends {
		bind := f.bind
		if f.path.Network() == "unix" {
			bind = "unix@" + f.bind + " mode 600"
		}
		lines = append(lines, "frontend "+string(f.path), "  bind "+bind, "  default_backend "+string(hopOf(f.path)))
	}
	lines = append(lines,
		"backend "+string(drivers.TCP), "  server "+serverName+" "+address(l.tcp),
		"backend "+string(drivers.Unix), "  server "+serverName+" "+address(l.unix),
		"")
	words := []string{l.tcp, l.unix, l.stats}
	for _, f := range l.frontends {
		words = append(words, f.bind)
	}
	for _, s := range words {
		if strings.ContainsAny(s, " \n\t#") {
			return "", fmt.Errorf("haproxy: %q cannot be written in haproxy.cfg (a space, tab, newline or #)", s)
		}
	}
	return strings.Join(lines, "\n"), nil
}

// address is a server's address in haproxy.cfg: a socket path as
// unix@PATH, HOST:PORT as it is.
func address(a string) string {
	if strings.HasPrefix(a, "/") {
		return "unix@" + a
	}
	return a
}

// serverName is the one server of each backend.
const serverName = "server"
