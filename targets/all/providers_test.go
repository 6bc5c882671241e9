package all_test

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

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

func TestMain(m *testing.M) {
	child.MaybeRun()
	code := m.Run()
	stopShared()
	os.Exit(code)
}

// TestLocalSupplyAndStop starts every registered target's real server with
// the local provider, checks both endpoints accept, that the socket
// directory is private and the TCP listener is on loopback, that no
// password shows on a command line, then stops it and checks nothing is
// left.
func TestLocalSupplyAndStop(t *testing.T) {
	for _, tg := range targets.List() {
		t.Run(tg.Name, func(t *testing.T) {
			if bins := targettest.Binaries[tg.Name]; bins != nil {
				testutil.NeedAny(t, bins...)
			} else if !tg.Own {
				t.Fatalf("target %s: add its server binaries to this test's list", tg.Name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			l := supply.NewLocal()
			t.Cleanup(func() { _ = l.Close() })
			srv, err := l.Supply(ctx, tg.Supply())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Stop(context.Background()) })
			checkLocalServer(t, l, srv)
			dir := filepath.Dir(srv.Unix().Address)
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

func checkLocalServer(t *testing.T, l *supply.Local, srv *supply.Server) {
	t.Helper()
	if srv.PID <= 0 || srv.Provider != "local" {
		t.Fatalf("server = %+v, want a local process", srv)
	}
	// A hop that reaches its server over TCP only has no tcp or unix
	// path: its endpoints are the routes of its client's leg there.
	if srv.TCP().Transport.Seen() != drivers.TCP || srv.Unix().Transport.Seen() != drivers.Unix {
		t.Fatalf("endpoints %v / %v", srv.TCP(), srv.Unix())
	}
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		if err := ep.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := drivers.Reach(context.Background(), ep); err != nil {
			t.Fatalf("server not reachable over %s: %v", ep, err)
		}
	}
	// A server that must not run as root runs as its own user: the run dir
	// then lets it pass (0711) and its server dir is its own, 0700.
	if fi, err := os.Stat(l.Root()); err != nil || (fi.Mode().Perm() != 0o700 && fi.Mode().Perm() != 0o711) {
		t.Fatalf("temp dir %s mode %v (%v), want 0700 or 0711", l.Root(), fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(filepath.Dir(srv.Unix().Address)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("socket dir %s mode %v (%v): open to others", filepath.Dir(srv.Unix().Address), fi.Mode().Perm(), err)
	}
	if !strings.HasPrefix(srv.TCP().Address, "127.0.0.1:") {
		t.Fatalf("TCP endpoint %s is not on 127.0.0.1", srv.TCP().Address)
	}
	testutil.AssertLoopbackOnly(t, srv.TCP().Address)
	if pw := srv.TCP().Password; pw != "" {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(srv.PID), "cmdline"))
		if err != nil || strings.Contains(string(cmdline), pw) {
			t.Fatalf("the server's command line shows its password (or cannot be read: %v)", err)
		}
	}
}

// TestLocalCannotSupplyWithoutBinaries: with nothing on PATH, every
// database target's recipe says the local provider cannot supply it, and
// where it looked.
func TestLocalCannotSupplyWithoutBinaries(t *testing.T) {
	l := &supply.Local{LookPath: func(string) (string, error) { return "", os.ErrNotExist }}
	defer l.Close()
	for _, tg := range targets.List() {
		if tg.Own {
			continue
		}
		_, err := l.Supply(context.Background(), tg.Supply())
		if !errors.Is(err, supply.ErrCannotSupply) {
			t.Errorf("%s: got %v, want ErrCannotSupply", tg.Name, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "PATH") || strings.Contains(err.Error(), "is not installed")) {
			t.Errorf("%s: %q does not say it looked on PATH, and what PATH was", tg.Name, err)
		}
	}
}

// TestContainerSpecKeepsPasswordsOffCommandLines checks the command lines
// dbsock gives every target's container: loopback only, sockets in /sock, and no password.
// (A hop in a container of its own, in front of another's server, is
// specified only with that server's endpoints: its own package checks it.)
func TestContainerSpecKeepsPasswordsOffCommandLines(t *testing.T) {
	for _, tg := range targets.Containers() {
		if tg.Container.Behind != nil {
			continue
		}
		target := tg.Name
		dir := t.TempDir()
		sp, err := tg.Container.Spec(supply.SpecFor{Port: 12345, Dir: dir, Bind: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		if sp.TLSPort != 0 {
			t.Errorf("%s: serves TLS at %d without the run's certificate", target, sp.TLSPort)
		}
		cmd := strings.Join(sp.Cmd, " ")
		if sp.Password != "" && strings.Contains(cmd, sp.Password) {
			t.Errorf("%s: the password is on the command line: %s", target, cmd)
		}
		config := ""
		if sp.Config != "" {
			b, err := os.ReadFile(filepath.Join(dir, sp.Config))
			if err != nil || sp.Password == "" || !strings.Contains(string(b), sp.Password) {
				t.Errorf("%s: config file %q (%v) does not hold the password", target, b, err)
			}
			config = string(b)
		}
		if !strings.Contains(cmd, "127.0.0.1") && !strings.Contains(config, "bind 127.0.0.1") {
			t.Errorf("%s: not bound to 127.0.0.1: %s", target, cmd)
		}
		if !strings.Contains(cmd, "/sock") {
			t.Errorf("%s: socket not in the bind-mounted /sock: %s", target, cmd)
		}
	}
}

// TestContainerSpecServesTLS checks that every target's container but
// mongo's (and a hop's in front of another's server) serves TLS with the
// run's certificate when given it, at a port of the spec's, with the files
// named on its command line or config.
func TestContainerSpecServesTLS(t *testing.T) {
	tf := supply.TLSFiles{Cert: "/sock/tls-cert.pem", Key: "/sock/tls-key.pem", CA: "/sock/tls-ca.pem"}
	for _, tg := range targets.Containers() {
		if tg.Container.Behind != nil {
			continue
		}
		dir := t.TempDir()
		sp, err := tg.Container.Spec(supply.SpecFor{Port: 12345, Dir: dir, Bind: "127.0.0.1,::1", TLS: tf, TLSPort: 12346})
		if err != nil {
			t.Fatal(err)
		}
		if tg.Name == "mongo" {
			if sp.TLSPort != 0 {
				t.Errorf("mongo: TLS port %d, but its containers are not given TLS", sp.TLSPort)
			}
			continue
		}
		config := ""
		if sp.Config != "" {
			b, _ := os.ReadFile(filepath.Join(dir, sp.Config))
			config = string(b)
		}
		all := strings.Join(sp.Cmd, " ") + "\n" + config
		if sp.TLSPort != 12345 && sp.TLSPort != 12346 {
			t.Errorf("%s: TLS port %d, want the spec's port or its TLS port", tg.Name, sp.TLSPort)
		}
		if !strings.Contains(all, tf.Cert) || !strings.Contains(all, tf.Key) {
			t.Errorf("%s: the certificate and key are not in its command line or config:\n%s", tg.Name, all)
		}
		if sp.TLSPort == 12346 && !strings.Contains(all, "12346") {
			t.Errorf("%s: TLS port 12346 is not in its command line or config:\n%s", tg.Name, all)
		}
	}
}
