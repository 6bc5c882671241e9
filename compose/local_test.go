package compose

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/compose/child"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
)

func TestMain(m *testing.M) {
	child.MaybeRun()
	os.Exit(m.Run())
}

var binaries = map[string][]string{
	"mysql":    {"mariadbd", "mysqld"},
	"redis":    {"redis-server"},
	"mongo":    {"mongod", "ferretdb"},
	"postgres": {"initdb"},
}

// TestLocalSupplyAndStop starts each real server, checks both endpoints
// accept, that the socket directory is private and the TCP listener is on
// loopback, then stops it and checks nothing is left.
func TestLocalSupplyAndStop(t *testing.T) {
	for _, target := range []string{"echo", "grpc", "http", "redis", "mysql", "mongo", "postgres"} {
		t.Run(target, func(t *testing.T) {
			if bins := binaries[target]; bins != nil {
				testutil.NeedAny(t, bins...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			l := NewLocal()
			t.Cleanup(func() { _ = l.Close() })
			srv, err := l.Supply(ctx, testTarget(target))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Stop(context.Background()) })
			if srv.PID <= 0 || srv.Provider != "local" {
				t.Fatalf("server = %+v, want a local process", srv)
			}
			if srv.TCP.Transport != drivers.TCP || srv.Unix.Transport != drivers.Unix {
				t.Fatalf("endpoints %v / %v", srv.TCP, srv.Unix)
			}
			if err := srv.TCP.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := srv.Unix.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := dialBoth(srv.TCP.Address, srv.Unix.Address)(ctx); err != nil {
				t.Fatalf("server not reachable on both transports: %v", err)
			}
			// PostgreSQL runs as its own user under root: the run dir then
			// lets it pass (0711) and its server dir is its own, 0700.
			want := os.FileMode(0o700)
			if target == "postgres" && os.Geteuid() == 0 {
				want = 0o711
			}
			if fi, err := os.Stat(l.Root()); err != nil || fi.Mode().Perm() != want {
				t.Fatalf("temp dir %s mode %v (%v), want %v", l.Root(), fi.Mode().Perm(), err, want)
			}
			if fi, err := os.Stat(filepath.Dir(srv.Unix.Address)); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Fatalf("socket dir %s mode %v (%v): open to others", filepath.Dir(srv.Unix.Address), fi.Mode().Perm(), err)
			}
			if host := srv.TCP.Address[:len("127.0.0.1:")]; host != "127.0.0.1:" {
				t.Fatalf("TCP endpoint %s is not on 127.0.0.1", srv.TCP.Address)
			}
			assertLoopbackOnly(t, srv.TCP.Address)
			if pw := srv.TCP.Password; pw != "" {
				cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(srv.PID), "cmdline"))
				if err != nil || strings.Contains(string(cmdline), pw) {
					t.Fatalf("the server's command line shows its password (or cannot be read: %v)", err)
				}
			}
			dir := filepath.Dir(srv.Unix.Address)
			if err := srv.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(srv.PID, 0); !errors.Is(err, syscall.ESRCH) {
				t.Fatalf("server pid %d still exists after Stop (kill 0: %v)", srv.PID, err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("server dir %s still exists after Stop", dir)
			}
			root := l.Root()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Fatalf("provider dir %s still exists after Close", root)
			}
		})
	}
}

// testTarget is what a provider is asked for to serve target.
func testTarget(target string) Target {
	if r, ok := recipes[target]; ok {
		return Target{Name: target, Recipe: r}
	}
	return Target{Name: target, Recipe: ChildRecipe(target)}
}

func TestLocalCannotSupplyWithoutBinaries(t *testing.T) {
	l := &Local{LookPath: func(string) (string, error) { return "", os.ErrNotExist }}
	defer l.Close()
	for _, target := range []string{"mysql", "redis", "mongo"} {
		_, err := l.Supply(context.Background(), testTarget(target))
		if !errors.Is(err, ErrCannotSupply) {
			t.Errorf("%s: got %v, want ErrCannotSupply", target, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "found on PATH (PATH=") || strings.Contains(err.Error(), "is not installed")) {
			t.Errorf("%s: %q does not say it looked on PATH, and what PATH was", target, err)
		}
	}
}

func TestLocalTempDirFailureSaysWhatToDo(t *testing.T) {
	t.Setenv("TMPDIR", "/nonexistent/dbsock-tmp")
	l := NewLocal()
	defer l.Close()
	_, err := l.serverDir("redis")
	if err == nil || !strings.Contains(err.Error(), "set TMPDIR to an existing directory") || !strings.Contains(err.Error(), "/nonexistent/dbsock-tmp") {
		t.Fatalf("got %v, want the fix and TMPDIR named", err)
	}
}

func TestExternalNeedsBothEndpoints(t *testing.T) {
	e := &External{Endpoints: map[string]Pair{
		"redis": {TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:6379"}},
	}}
	if _, err := e.Supply(context.Background(), testTarget("mysql")); !errors.Is(err, ErrCannotSupply) {
		t.Fatalf("no endpoints: got %v, want ErrCannotSupply", err)
	}
	if _, err := e.Supply(context.Background(), testTarget("redis")); err == nil || errors.Is(err, ErrCannotSupply) {
		t.Fatalf("one endpoint: got %v, want a hard error asking for --redis-socket", err)
	}
}

func TestAutoFallsThrough(t *testing.T) {
	a := &Auto{Providers: []Provider{&External{}, &External{Endpoints: map[string]Pair{
		"redis": {TCP: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"},
			Unix: drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/r.sock"}},
	}}}}
	srv, err := a.Supply(context.Background(), testTarget("redis"))
	if err != nil || srv.TCP.Address != "127.0.0.1:1" {
		t.Fatalf("got %v, %v", srv, err)
	}
	if _, err := a.Supply(context.Background(), testTarget("mongo")); !errors.Is(err, ErrCannotSupply) {
		t.Fatalf("got %v, want ErrCannotSupply", err)
	}
}

// assertLoopbackOnly checks in /proc/net/tcp and tcp6 that every listening
// socket on addr's port is bound to 127.0.0.1, not to all interfaces.
func assertLoopbackOnly(t *testing.T, addr string) {
	t.Helper()
	port, err := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	if err != nil {
		t.Fatal(err)
	}
	hexPort := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(hexPort) < 4 {
		hexPort = "0" + hexPort
	}
	found := false
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" || !strings.HasSuffix(fields[1], ":"+hexPort) {
				continue
			}
			found = true
			if fields[1] != "0100007F:"+hexPort {
				t.Fatalf("port %d listens on %s (%s), not on 127.0.0.1 only", port, fields[1], f)
			}
		}
	}
	if !found {
		t.Fatalf("no listening socket on port %d in /proc/net/tcp", port)
	}
}
