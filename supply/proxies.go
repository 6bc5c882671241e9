package supply

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/peercred"
)

// A server the user runs may have a proxy in front of one of its
// endpoints (HAProxy on the socket, a pooler on the port), which a run
// would time as the server and whose CPU it would read as the server's.
// Before anything is measured, dbsock asks the kernel which process
// listens at each endpoint (the socket's SO_PEERCRED, the port's owner in
// /proc) and refuses an endpoint served by a proxy that was not declared.

// proxies are the command names (/proc/PID/comm, at most 15 bytes) of the
// proxies and poolers people put in front of a database, and their names.
var proxies = map[string]string{
	"haproxy": "HAProxy", "envoy": "Envoy", "nutcracker": "twemproxy", "twemproxy": "twemproxy",
	"proxysql": "ProxySQL", "mysqlrouter": "MySQL Router", "maxscale": "MariaDB MaxScale",
	"odyssey": "Odyssey", "pgcat": "PgCat", "pgpool": "Pgpool-II",
	"cloud-sql-proxy": "the Cloud SQL Auth Proxy", "cloud_sql_proxy": "the Cloud SQL Auth Proxy",
	"alloydb-auth-pr": "the AlloyDB Auth Proxy", "socat": "socat", "stunnel4": "stunnel", "stunnel": "stunnel",
	"nginx": "nginx", "traefik": "Traefik", "mcrouter": "mcrouter", "redis-cluster-p": "Redis Cluster Proxy",
}

// listener is the process that serves an endpoint, as the kernel says it.
type listener struct {
	pid  int
	name string // its command name
	how  string // how it was found
}

// listenerOf finds the process listening at ep: over a Unix socket the
// one that called listen on it; over TCP on this host the owner of the
// listening port. ok is false when the kernel would not say (another
// user's process, another host, another platform).
func listenerOf(ep drivers.Endpoint) (listener, bool) {
	if ep.Transport.Network() == "unix" {
		pid, err := peercred.ListenerPID(ep.Address)
		if err != nil {
			return listener{}, false
		}
		return listener{pid, peercred.Name(pid), "the process that listens on it, as the socket's SO_PEERCRED says"}, true
	}
	host, port, err := net.SplitHostPort(ep.Address)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || !net.ParseIP(host).IsLoopback() {
		return listener{}, false
	}
	pid, err := cpustat.ListeningPID(n)
	if err != nil {
		return listener{}, false
	}
	return listener{pid, peercred.Name(pid), "the owner of the listening socket, in /proc"}, true
}

// proxyOf says which proxy l is, or "" when its name is none of proxies
// nor of hops (the hops that are targets of dbsock's), or is target's own
// server (a hop measured as its own target).
func (l listener) proxyOf(target string, hops map[string]string) string {
	if l.name == "" || strings.EqualFold(l.name, target) {
		return ""
	}
	return cmp.Or(proxies[l.name], hops[l.name])
}

// checkListeners refuses an endpoint of target's that a proxy serves, and
// says when its TCP port and its socket are served by two processes
// (neither below the other): then the run would compare two servers.
func checkListeners(target string, tcp, unix drivers.Endpoint, hops map[string]string) (warning string, err error) {
	lt, okT := listenerOf(tcp)
	lu, okU := listenerOf(unix)
	for _, c := range []struct {
		l    listener
		ok   bool
		ep   drivers.Endpoint
		what string
	}{{lu, okU, unix, "Unix socket"}, {lt, okT, tcp, "TCP address"}} {
		if p := c.l.proxyOf(target, hops); c.ok && p != "" {
			return "", fmt.Errorf("external %s: its %s %s is served by %s (pid %d, %s), which is %s, not the %s server: "+
				"dbsock would time %s's route as the server's and read %s's CPU as the server's; give the server's own endpoint "+
				"(a hop dbsock starts in front of a server is measured with --via: docs/paths.md)", target, c.what, c.ep.Address, c.l.name, c.l.pid, c.l.how, p, target, p, p)
		}
	}
	if okT && okU && !related(lt.pid, lu.pid) {
		warning = fmt.Sprintf("Its TCP address %s is served by %s (pid %d) and its Unix socket %s by %s (pid %d), neither below the other: "+
			"the two paths may reach two servers, or one through something in between.", tcp.Address, lt.name, lt.pid, unix.Address, lu.name, lu.pid)
	}
	return warning, nil
}

// related says whether a and b are one process, or one is below the other.
func related(a, b int) bool {
	for _, p := range [][2]int{{a, b}, {b, a}} {
		if below, err := cpustat.Descendants(p[0]); err == nil && slices.Contains(below, p[1]) {
			return true
		}
	}
	return a == b
}
