package twemproxy

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// One nutcracker stands in front of one Redis: a pool for each route of
// the client's leg, named as its path (tcp-tcp, unix-tcp), listening where
// that leg names (127.0.0.1 TCP, or a socket in nutcracker's private
// directory, mode 0600), each with the one server, Redis's 127.0.0.1 TCP
// address: nutcracker connects to its servers over TCP only (it has no
// way to name a server's Unix socket), so the leg to Redis is TCP on
// every route; each connects to it as it starts (preconnect), so that
// Redis lists one connection of each pool's from the start. Each pool
// authenticates its clients with the run's password and sends it to
// Redis (redis_auth): the configuration holds the password, and is
// written 0600 in nutcracker's private directory, never on a command
// line.

// pool is one of nutcracker's pools: the path it serves and the address
// it listens on (127.0.0.1:PORT, or a socket path).
type pool struct {
	path   drivers.Transport
	listen string
}

// layout is one nutcracker's configuration: its pools, Redis's TCP
// address they reach and the password of both.
type layout struct {
	pools    []pool
	server   string // Redis's 127.0.0.1:PORT
	password string
}

// serverName is the one server of each pool, as nutcracker's stats name
// it.
const serverName = "redis"

// config is nutcracker.yml for l.
func config(l layout) (string, error) {
	if l.server == "" || l.password == "" || len(l.pools) == 0 {
		return "", fmt.Errorf("twemproxy: a configuration needs pools, Redis's TCP address and the run's password (got %d pools, %q, a password of %d bytes)", len(l.pools), l.server, len(l.password))
	}
	if strings.HasPrefix(l.server, "/") {
		return "", fmt.Errorf("twemproxy: nutcracker reaches its servers over TCP only, not at the socket %s", l.server)
	}
	var lines []string
	for _, p := range l.pools {
		listen := p.listen
		if strings.HasPrefix(listen, "/") {
			listen += " 0600"
		}
		lines = append(lines,
			string(p.path)+":",
			"  listen: "+listen,
			"  redis: true",
			"  redis_auth: "+l.password,
			"  hash: fnv1a_64",
			"  distribution: ketama",
			"  auto_eject_hosts: false",
			"  preconnect: true",
			"  servers:",
			"    - "+l.server+":1 "+serverName)
	}
	words := []string{l.server, l.password}
	for _, p := range l.pools {
		words = append(words, string(p.path), p.listen)
	}
	for _, w := range words {
		if w == "" || strings.ContainsAny(w, " \n\t#:'\"{}[],&*!|>%@`") && !isAddress(w) {
			return "", fmt.Errorf("twemproxy: %q cannot be written in nutcracker.yml as a plain word (a space, quote, colon or other YAML sign)", w)
		}
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// isAddress says whether w is HOST:PORT with no other sign.
func isAddress(w string) bool {
	host, port, ok := strings.Cut(w, ":")
	return ok && host != "" && port != "" && !strings.ContainsAny(host+port, " \n\t#:'\"{}[],&*!|>%@`")
}
