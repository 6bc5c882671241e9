package supply

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
)

// startHAProxy runs HAProxy in TCP mode in front of backend (a TCP
// address): a frontend on a socket in dir and one at a free 127.0.0.1
// port, which it returns with the socket's path.
func startHAProxy(t *testing.T, backend string) (sock, addr string) {
	t.Helper()
	testutil.NeedAny(t, "haproxy")
	dir := t.TempDir()
	port, err := FreePort4()
	if err != nil {
		t.Fatal(err)
	}
	sock, addr = filepath.Join(dir, "h.sock"), "127.0.0.1:"+strconv.Itoa(port)
	cfg := fmt.Sprintf("global\n  maxconn 64\ndefaults\n  mode tcp\n  timeout connect 2s\n  timeout client 30s\n  timeout server 30s\n"+
		"frontend sock\n  bind unix@%s\n  default_backend real\nfrontend port\n  bind %s\n  default_backend real\nbackend real\n  server r %s\n", sock, addr, backend)
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy"
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return sock, addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not make %s in 10s: %s", sock, out.String())
		}
	}
}

// TestAnUndeclaredProxyIsNamed: HAProxy where a Redis the user runs should
// have its socket, or its port, is found by the kernel's account of who
// listens there and named, before anything is measured; the server's own
// endpoints pass, and two processes behind the two paths are said.
func TestAnUndeclaredProxyIsNamed(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	l := NewLocal()
	defer l.Close()
	redis, err := portTestServer.startLocal(context.Background(), l, "redis")
	if err != nil {
		t.Fatal(err)
	}
	defer redis.Stop(context.Background())
	sock, addr := startHAProxy(t, redis.TCP().Address)
	viaSock := drivers.Endpoint{Transport: drivers.Unix, Address: sock}
	viaPort := drivers.Endpoint{Transport: drivers.TCP, Address: addr}
	for _, tc := range []struct {
		name      string
		tcp, unix drivers.Endpoint
		want      string
	}{
		{"socket", redis.TCP(), viaSock, "external redis: its Unix socket " + sock + " is served by haproxy (pid "},
		{"port", viaPort, redis.Unix(), "external redis: its TCP address " + addr + " is served by haproxy (pid "},
		{"own endpoints", redis.TCP(), redis.Unix(), ""},
	} {
		e := &External{Endpoints: map[string]Pair{"redis": {TCP: tc.tcp, Unix: tc.unix}}}
		srv, err := e.Supply(context.Background(), Target{Name: "redis"})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && len(srv.Warnings) > 0:
			t.Errorf("%s: warned %q", tc.name, srv.Warnings)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "which is HAProxy, not the redis server")):
			t.Errorf("%s: got %v, want %q naming HAProxy", tc.name, err, tc.want)
		}
	}
}

// TestTwoListenersAreSaid: a TCP address and a socket served by two
// unrelated processes (here two Redis servers) are said, not refused.
func TestTwoListenersAreSaid(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	l := NewLocal()
	defer l.Close()
	var servers []*Server
	for range 2 {
		srv, err := portTestServer.startLocal(context.Background(), l, "redis")
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop(context.Background())
		servers = append(servers, srv)
	}
	warning, err := checkListeners("redis", servers[0].TCP(), servers[1].Unix(), nil)
	if err != nil || !strings.Contains(warning, "neither below the other: the two paths may reach two servers") {
		t.Fatalf("warning %q, err %v", warning, err)
	}
}

// TestHopsAreProxiesInFrontOfOthers: a hop that is a target of dbsock's
// (given by External.Hops) is a proxy in front of another target, and the
// server of its own.
func TestHopsAreProxiesInFrontOfOthers(t *testing.T) {
	hops := map[string]string{"pooler": "Pooler"}
	for _, tc := range []struct {
		name, target, want string
	}{
		{"pooler", "postgres", "Pooler"}, {"pooler", "pooler", ""}, {"haproxy", "redis", "HAProxy"}, {"redis-server", "redis", ""}, {"", "redis", ""},
	} {
		if got := (listener{name: tc.name}).proxyOf(tc.target, hops); got != tc.want {
			t.Errorf("%s at %s's endpoint: %q, want %q", tc.name, tc.target, got, tc.want)
		}
	}
}
