package twemproxy

import (
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestConfig: a pool per path at its listener, the socket mode 0600,
// each reaching Redis's TCP address with the run's password, and no
// word that could break the YAML.
func TestConfig(t *testing.T) {
	l := layout{pools: []pool{{drivers.TCPHopTCP, "127.0.0.1:2001"}, {drivers.UnixHopTCP, "/d/unix-tcp.sock"}},
		server: "127.0.0.1:6379", password: "0123abcd"}
	cfg, err := config(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tcp-tcp:\n  listen: 127.0.0.1:2001\n  redis: true\n  redis_auth: 0123abcd\n",
		"unix-tcp:\n  listen: /d/unix-tcp.sock 0600\n  redis: true\n  redis_auth: 0123abcd\n",
		"  preconnect: true\n  servers:\n    - 127.0.0.1:6379:1 redis\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("nutcracker.yml lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Count(cfg, "    - 127.0.0.1:6379:1 redis\n") != 2 {
		t.Errorf("each pool must reach Redis's TCP address:\n%s", cfg)
	}
	for _, bad := range []layout{
		{pools: l.pools, server: "127.0.0.1:6379", password: "a b"},
		{pools: l.pools, server: "127.0.0.1:6379", password: "a#b"},
		{pools: []pool{{drivers.UnixHopTCP, "/d/a b.sock"}}, server: "127.0.0.1:6379", password: "x"},
		{pools: l.pools, server: "/r/redis.sock", password: "x"},
		{pools: l.pools, server: "127.0.0.1:6379"},
	} {
		if cfg, err := config(bad); err == nil {
			t.Errorf("%+v was written:\n%s", bad, cfg)
		}
	}
}

func testStats(t *testing.T) stats {
	t.Helper()
	b, err := os.ReadFile("testdata/stats.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseStats(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParseStats reads nutcracker 0.5.0's stats: its version, each pool
// and each pool's server.
func TestParseStats(t *testing.T) {
	s := testStats(t)
	if s.version != "0.5.0" || len(s.pools) != 2 {
		t.Fatalf("version %q, pools %+v", s.version, s.pools)
	}
	p, err := s.pool("tcp-tcp")
	if err != nil {
		t.Fatal(err)
	}
	if p.requests() != 3 || p.serverConnections() != 1 || p.clientConnections != 0 || len(p.servers) != 1 {
		t.Errorf("pool tcp-tcp: %+v", p)
	}
	if got := p.String(); got != "client_connections 0, server redis: server_connections 1, requests 3" {
		t.Errorf("pool tcp-tcp in words: %q", got)
	}
	if _, err := s.pool("tcp"); err == nil || err.Error() != "nutcracker's stats have no pool tcp (its pools: tcp-tcp, unix-tcp)" {
		t.Errorf("no pool tcp: %v", err)
	}
	for _, bad := range []string{"", "[]", `{"service":"nutcracker"}`, `{"version":"0.5.0","p":{"client_connections":"x"}}`} {
		if _, err := parseStats([]byte(bad)); err == nil {
			t.Errorf("%q was read as stats", bad)
		}
	}
}

// TestPoolLeg: a pool that counted a connection's requests verifies it,
// one that did not fails it quoting its counts.
func TestPoolLeg(t *testing.T) {
	after, err := testStats(t).pool("tcp-tcp")
	if err != nil {
		t.Fatal(err)
	}
	before := poolStats{servers: map[string]serverStats{"redis": {serverConnections: 1, requests: 0}}}
	got, err := poolLeg(drivers.TCPHopTCP, before, after, 3, "this connection's 3 GETs")
	if err != nil || got != "nutcracker's stats: pool tcp-tcp counted 3 requests for this connection's 3 GETs (client_connections 0, server redis: server_connections 1, requests 3)" {
		t.Errorf("a pool that counted them: %q, %v", got, err)
	}
	_, err = poolLeg(drivers.TCPHopTCP, after, after, 3, "this connection's 3 GETs")
	if err == nil || !strings.Contains(err.Error(), "nutcracker's pool tcp-tcp counted 0 requests, not the 3 of this connection's 3 GETs: the connection on the tcp-tcp path did not reach the pool its path names (stats of pool tcp-tcp before: client_connections 0, server redis: server_connections 1, requests 3;") {
		t.Errorf("a pool that counted none: %v", err)
	}
	none := poolStats{servers: map[string]serverStats{"redis": {requests: 9}}}
	if _, err := poolLeg(drivers.TCPHopTCP, before, none, 3, "x"); err == nil || !strings.Contains(err.Error(), "holds no connection to Redis") {
		t.Errorf("no server connection: %v", err)
	}
}

// TestClientsLeg: every client of Redis but dbsock's own is nutcracker's,
// over TCP from 127.0.0.1; one on the socket, or none, fails.
func TestClientsLeg(t *testing.T) {
	const (
		a    = "id=3 addr=127.0.0.1:49532 laddr=127.0.0.1:26379 fd=8 name= age=0 idle=0 flags=N db=0 cmd=get user=default resp=2"
		b    = "id=4 addr=127.0.0.1:49544 laddr=127.0.0.1:26379 fd=9 name= age=0 idle=0 flags=N db=0 cmd=get user=default resp=2"
		self = "id=5 addr=127.0.0.1:49554 laddr=127.0.0.1:26379 fd=11 name= age=0 idle=0 flags=N db=0 cmd=client|list user=default resp=2"
		sock = "id=6 addr=/r/redis.sock:0 laddr=/r/redis.sock fd=12 name= age=0 idle=0 flags=U db=0 cmd=get user=default resp=2"
	)
	got, err := clientsLeg(a+"\n"+b+"\n"+self+"\n", 5)
	if err != nil || got != "Redis's CLIENT LIST: 2 clients but dbsock's own, each over TCP from 127.0.0.1 (addr 127.0.0.1:49532, 127.0.0.1:49544): nutcracker's, one per pool" {
		t.Errorf("nutcracker's two: %q, %v", got, err)
	}
	if _, err := clientsLeg(a+"\n"+sock+"\n"+self, 5); err == nil || !strings.Contains(err.Error(), "Redis sees a client over Unix") {
		t.Errorf("a client on the socket: %v", err)
	}
	if _, err := clientsLeg(self, 5); err == nil || !strings.Contains(err.Error(), "no client but dbsock's own") {
		t.Errorf("none but dbsock's: %v", err)
	}
}
