package twemproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"
)

// nutcracker's own view is read from its stats port (-s, on 127.0.0.1):
// one JSON object per connection, aggregated every stats interval (-i):
// the service's version, then per pool its client connections and per
// server of the pool its server connections and the requests it relayed.

// stats is one answer of the stats port.
type stats struct {
	version string
	pools   map[string]poolStats
	raw     string // the answer as nutcracker gave it, for evidence
}

// poolStats is one pool's counts.
type poolStats struct {
	clientConnections int64
	servers           map[string]serverStats
}

// serverStats is one server's counts within a pool.
type serverStats struct {
	serverConnections, requests int64
}

// requests are the requests the pool's servers were sent.
func (p poolStats) requests() int64 {
	var n int64
	for _, s := range p.servers {
		n += s.requests
	}
	return n
}

// serverConnections are the pool's connections to its servers.
func (p poolStats) serverConnections() int64 {
	var n int64
	for _, s := range p.servers {
		n += s.serverConnections
	}
	return n
}

// String is the pool's counts in nutcracker's words.
func (p poolStats) String() string {
	names := make([]string, 0, len(p.servers))
	for n := range p.servers {
		names = append(names, n)
	}
	sort.Strings(names)
	s := fmt.Sprintf("client_connections %d", p.clientConnections)
	for _, n := range names {
		s += fmt.Sprintf(", server %s: server_connections %d, requests %d", n, p.servers[n].serverConnections, p.servers[n].requests)
	}
	return s
}

// maxStats bounds what dbsock reads of one answer of the stats port.
const maxStats = 1 << 20

// parseStats reads an answer of the stats port: each member that is an
// object with client_connections is a pool, and each of its members that
// is an object a server.
func parseStats(b []byte) (stats, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return stats{}, fmt.Errorf("nutcracker's stats are not a JSON object: %w", err)
	}
	s := stats{pools: map[string]poolStats{}, raw: string(b)}
	_ = json.Unmarshal(top["version"], &s.version)
	for name, m := range top {
		var members map[string]json.RawMessage
		if json.Unmarshal(m, &members) != nil || members["client_connections"] == nil {
			continue
		}
		p := poolStats{servers: map[string]serverStats{}}
		if err := json.Unmarshal(members["client_connections"], &p.clientConnections); err != nil {
			return stats{}, fmt.Errorf("nutcracker's stats: pool %s's client_connections: %w", name, err)
		}
		for server, sm := range members {
			var srv struct {
				ServerConnections *int64 `json:"server_connections"`
				Requests          *int64 `json:"requests"`
			}
			if json.Unmarshal(sm, &srv) != nil || srv.Requests == nil || srv.ServerConnections == nil {
				continue
			}
			p.servers[server] = serverStats{serverConnections: *srv.ServerConnections, requests: *srv.Requests}
		}
		s.pools[name] = p
	}
	if s.version == "" || len(s.pools) == 0 {
		return stats{}, fmt.Errorf("nutcracker's stats name no version or no pool: %.200q", b)
	}
	return s, nil
}

// pool is the pool named name; an error quotes the pools there are.
func (s stats) pool(name string) (poolStats, error) {
	if p, ok := s.pools[name]; ok {
		return p, nil
	}
	var names []string
	for n := range s.pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return poolStats{}, fmt.Errorf("nutcracker's stats have no pool %s (its pools: %s)", name, strings.Join(names, ", "))
}

// readStats reads one answer of the stats port at addr, within 5 s and
// maxStats bytes.
func readStats(ctx context.Context, addr string) (stats, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return stats{}, fmt.Errorf("connect to nutcracker's stats port %s: %w", addr, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	b, err := io.ReadAll(io.LimitReader(c, maxStats+1))
	if err != nil {
		return stats{}, fmt.Errorf("nutcracker's stats port %s: read its answer: %w", addr, err)
	}
	if len(b) > maxStats {
		return stats{}, fmt.Errorf("nutcracker's stats port %s: its answer is over %d bytes", addr, maxStats)
	}
	return parseStats(b)
}
