package haproxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// TestConfig: a frontend per path, each to the backend of its hop's leg,
// the sockets mode 0600, and no word that could break a line.
func TestConfig(t *testing.T) {
	l := layout{
		frontends: []frontend{{drivers.TCPHopTCP, "127.0.0.1:2001"}, {drivers.UnixHopTCP, "/d/unix-tcp.sock"}, {drivers.TCP, "127.0.0.1:2002"}, {drivers.Unix, "/d/unix.sock"}},
		tcp:       "127.0.0.1:6379", unix: "/r/redis.sock", stats: "/d/stats.sock",
	}
	cfg, err := config(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  stats socket /d/stats.sock mode 600 level operator\n",
		"  mode tcp\n",
		"frontend tcp-tcp\n  bind 127.0.0.1:2001\n  default_backend tcp\n",
		"frontend unix-tcp\n  bind unix@/d/unix-tcp.sock mode 600\n  default_backend tcp\n",
		"frontend tcp\n  bind 127.0.0.1:2002\n  default_backend unix\n",
		"frontend unix\n  bind unix@/d/unix.sock mode 600\n  default_backend unix\n",
		"backend tcp\n  server server 127.0.0.1:6379\n",
		"backend unix\n  server server unix@/r/redis.sock\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("haproxy.cfg lacks %q:\n%s", want, cfg)
		}
	}
	l.unix = "/r/a b.sock"
	if _, err := config(l); err == nil || !strings.Contains(err.Error(), `"/r/a b.sock" cannot be written in haproxy.cfg`) {
		t.Errorf("a path with a space: %v", err)
	}
}

func testSessions(t *testing.T) []session {
	t.Helper()
	b, err := os.ReadFile("testdata/show-sess-all.txt")
	if err != nil {
		t.Fatal(err)
	}
	return parseSessions(string(b))
}

// TestParseSessions reads HAProxy 2.6's show sess all.
func TestParseSessions(t *testing.T) {
	all := testSessions(t)
	if len(all) != 4 {
		t.Fatalf("%d sessions, want 4", len(all))
	}
	want := session{source: "unix:3", frontend: "unix-tcp", listener: "unix:3", backend: "tcp", backendAddr: "127.0.0.1:56118",
		server: "server", serverAddr: "127.0.0.1:16399", clientCtrl: "unix_stream", serverCtrl: "tcpv4"}
	if all[2] != want {
		t.Errorf("session 2: %+v, want %+v", all[2], want)
	}
	if all[0].clientLeg() != drivers.TCP || all[0].hopLeg() != drivers.Unix || all[3].backend != "<NONE>" || all[3].serverCtrl != "" {
		t.Errorf("sessions 0 and 3: %+v %+v", all[0], all[3])
	}
}

// TestCheck: each leg checked from HAProxy's session and the server's
// view, each able to fail it.
func TestCheck(t *testing.T) {
	all := testSessions(t)
	ep := func(path drivers.Transport) drivers.Endpoint {
		return drivers.Endpoint{Transport: path, Hop: hopOf(path)}
	}
	redisTCP := drivers.Verification{Transport: drivers.TCP, Peer: "127.0.0.1:56118", Evidence: "CLIENT INFO: addr=127.0.0.1:56118"}
	redisUnix := drivers.Verification{Transport: drivers.Unix, Evidence: "CLIENT INFO: addr=/r/redis.sock:0"}
	for _, tc := range []struct {
		name   string
		ep     drivers.Endpoint
		local  string
		server drivers.Verification
		want   string
	}{
		{"tcp by the client's address", ep(drivers.TCP), "127.0.0.1:37774", redisUnix,
			"tcp: HAProxy's show sess, by the client's address 127.0.0.1:37774: source=127.0.0.1:37774 frontend=tcp (listener addr=127.0.0.1:16400, ctrl=tcpv4) backend=unix addr=unix server=server addr=unix (ctrl=unix_stream); the hop's leg: Redis's CLIENT INFO: addr=/r/redis.sock:0"},
		{"unix-tcp by HAProxy's address", ep(drivers.UnixHopTCP), "", redisTCP,
			"unix: HAProxy's show sess, by HAProxy's address 127.0.0.1:56118 as the server saw it: source=unix:3 frontend=unix-tcp (listener addr=unix:3, ctrl=unix_stream) backend=tcp addr=127.0.0.1:56118 server=server addr=127.0.0.1:16399 (ctrl=tcpv4); the hop's leg: Redis's CLIENT INFO: addr=127.0.0.1:56118"},
		{"unix by its frontend", ep(drivers.Unix), "", redisUnix,
			"unix: HAProxy's show sess, by frontend unix (on two sockets no end has an address of its own): source=unix:2 frontend=unix (listener addr=unix:2, ctrl=unix_stream) backend=unix addr=unix server=server addr=unix (ctrl=unix_stream); the hop's leg: Redis's CLIENT INFO: addr=/r/redis.sock:0"},
		{"a hop leg on TCP where the path names the socket", ep(drivers.Unix), "", redisTCP,
			"error: HAProxy took the connection in on frontend unix-tcp, not unix (show sess: source=unix:3 frontend=unix-tcp (listener addr=unix:3, ctrl=unix_stream) backend=tcp addr=127.0.0.1:56118 server=server addr=127.0.0.1:16399 (ctrl=tcpv4))"},
		{"the server sees TCP", ep(drivers.TCP), "127.0.0.1:37774", redisTCP,
			"error: Redis sees HAProxy's connection over TCP, not Unix as the tcp path names (CLIENT INFO: addr=127.0.0.1:56118)"},
		{"no session", ep(drivers.TCP), "127.0.0.1:1", redisUnix,
			"error: HAProxy's show sess lists 0 sessions by the client's address 127.0.0.1:1, not one, so the tcp path's legs are not known"},
	} {
		v, err := check(tc.ep, all, tc.local, tc.server, "Redis")
		got := string(v.Transport) + ": " + v.Evidence
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	lying := all[0]
	lying.serverAddr, lying.serverCtrl = "127.0.0.1:16399", "tcpv4"
	_, err := check(ep(drivers.TCP), []session{lying}, "127.0.0.1:37774", redisUnix, "Redis")
	if err == nil || err.Error() != "HAProxy reaches Redis over TCP, not Unix as the tcp path names (show sess: backend unix, server server addr=127.0.0.1:16399, ctrl=tcpv4)" {
		t.Errorf("a lying backend: %v", err)
	}
}

// TestContainerSpec: HAProxy's container listens on 127.0.0.1 and in its
// /sock only, reaches the server at the endpoints the docker provider
// names (its socket under /behind), its configuration in /sock and holding
// no account, and names each path's hop's leg; without the server behind
// it, it is refused.
func TestContainerSpec(t *testing.T) {
	dir := t.TempDir()
	spec := containerSpec(tcpLeg, unixLeg)
	behind := drivers.Pair{TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:6379"},
		Unix: drivers.Endpoint{Transport: drivers.Unix, Address: "/behind/redis.sock"}}
	sp, err := spec(supply.SpecFor{Port: 12345, Dir: dir, Bind: "127.0.0.1,::1", Behind: behind})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sp.Cmd, " "); got != "haproxy -f /sock/haproxy.cfg" || sp.Socket != "unix.sock" || sp.Password != "" || sp.User != "" {
		t.Errorf("cmd %q, socket %q, account %q/%q", got, sp.Socket, sp.User, sp.Password)
	}
	b, err := os.ReadFile(filepath.Join(dir, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, want := range []string{
		"  stats socket /sock/stats.sock mode 600 level operator\n",
		"frontend tcp\n  bind 127.0.0.1:12345\n  default_backend unix\n",
		"frontend unix\n  bind unix@/sock/unix.sock mode 600\n  default_backend unix\n",
		"frontend unix-tcp\n  bind unix@/sock/unix-tcp.sock mode 600\n  default_backend tcp\n",
		"backend tcp\n  server server 127.0.0.1:6379\n",
		"backend unix\n  server server unix@/behind/redis.sock\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("haproxy.cfg lacks %q:\n%s", want, cfg)
		}
	}
	for _, line := range strings.Split(cfg, "\n") {
		if b, ok := strings.CutPrefix(line, "  bind "); ok && !strings.HasPrefix(b, "127.0.0.1:") && !strings.HasPrefix(b, "unix@/sock/") {
			t.Errorf("HAProxy's container binds %q, not 127.0.0.1 or its /sock", b)
		}
	}
	if len(sp.HopPaths) != 4 {
		t.Fatalf("%d paths, want the four of two legs: %+v", len(sp.HopPaths), sp.HopPaths)
	}
	for _, ep := range sp.HopPaths {
		if ep.Hop != hopOf(ep.Transport) || (ep.Transport.Network() == "unix") == strings.HasPrefix(ep.Address, "127.0.0.1:") {
			t.Errorf("%s: address %q, hop's leg %q", ep.Transport, ep.Address, ep.Hop)
		}
	}
	if _, err := spec(supply.SpecFor{Port: 12345, Dir: dir}); err == nil || !strings.Contains(err.Error(), "start it with the docker provider") {
		t.Errorf("without the server behind: %v", err)
	}
}
