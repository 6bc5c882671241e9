package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// silentPair listens on 127.0.0.1 and on a Unix socket, accepts
// connections and never says a word: a server that does not answer.
func silentPair(t *testing.T, sockName string) (addr, sock string) {
	t.Helper()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sock = filepath.Join(dir, sockName)
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	for _, l := range []net.Listener{tl, ul} {
		go func(l net.Listener) {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				held = append(held, c) // keep it open, say nothing
			}
		}(l)
	}
	t.Cleanup(func() {
		tl.Close()
		ul.Close()
	})
	return tl.Addr().String(), sock
}

// TestSilentServerObeysOpTimeout: against a server that accepts and never
// answers, every database target gives up after --op-timeout (connecting,
// asking what the server is, seeding) and says what did not answer.
func TestSilentServerObeysOpTimeout(t *testing.T) {
	for _, tt := range []struct {
		target, sockName string
		flags            func(addr, sock string) []string
	}{
		{"mysql", "mysqld.sock", func(a, s string) []string { return []string{"--mysql-addr", a, "--mysql-socket", s} }},
		{"redis", "redis.sock", func(a, s string) []string { return []string{"--redis-addr", a, "--redis-socket", s} }},
		{"mongo", "mongodb-1.sock", func(a, s string) []string { return []string{"--mongo-addr", a, "--mongo-socket", s} }},
		{"postgres", ".s.PGSQL.1", func(a, s string) []string {
			return []string{"--postgres-addr", a, "--postgres-socket-dir", filepath.Dir(s)}
		}},
	} {
		t.Run(tt.target, func(t *testing.T) {
			addr, sock := silentPair(t, tt.sockName)
			if tt.target == "postgres" { // the socket's name carries the port
				_, port, _ := net.SplitHostPort(addr)
				_, sock = silentPairAt(t, filepath.Join(t.TempDir(), ".s.PGSQL."+port))
			}
			args := append([]string{"run", tt.target, "--provider", "external", "--op-timeout", "300ms", "-q", "--n", "10"}, tt.flags(addr, sock)...)
			start := time.Now()
			code, _, errs := dbsock(t, args...)
			took := time.Since(start)
			if code != ExitFailed {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitFailed, errs)
			}
			if took > 3*time.Second {
				t.Fatalf("took %s with --op-timeout 300ms; stderr %q", took, errs)
			}
			if !strings.Contains(errs, "did not answer within 300ms (--op-timeout)") || !strings.Contains(errs, tt.target) {
				t.Fatalf("stderr %q does not say what did not answer", errs)
			}
		})
	}
}

// silentPairAt is silentPair's Unix half at a given path.
func silentPairAt(t *testing.T, sock string) (string, string) {
	t.Helper()
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t.Cleanup(func() { ul.Close() })
	return "", sock
}

// TestNothingListeningIsSaidAtOnce: a port nobody listens on and a socket
// file that does not exist are diagnosed at once for every database
// target, without waiting for a driver's own retries.
func TestNothingListeningIsSaidAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // now nothing listens there
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	for target, flags := range map[string][]string{
		"mysql":    {"--mysql-addr", addr, "--mysql-socket", filepath.Join(dir, "mysqld.sock")},
		"redis":    {"--redis-addr", addr, "--redis-socket", filepath.Join(dir, "redis.sock")},
		"mongo":    {"--mongo-addr", addr, "--mongo-socket", filepath.Join(dir, "mongodb-"+port+".sock")},
		"postgres": {"--postgres-addr", addr, "--postgres-socket-dir", dir},
	} {
		start := time.Now()
		code, _, errs := dbsock(t, append([]string{"run", target, "--provider", "external", "-q", "--n", "10"}, flags...)...)
		if code != ExitFailed || time.Since(start) > 3*time.Second || !strings.Contains(errs, "nothing accepts connections on "+addr) {
			t.Errorf("%s: exit %d after %s, stderr %q; want 1 at once, saying nothing accepts on %s", target, code, time.Since(start), errs, addr)
		}
		if strings.Contains(errs, "topology") {
			t.Errorf("%s: the driver's topology reached the user: %q", target, errs)
		}
	}
}

// TestReportNamesTheFlags: the report of a run whose server never answers
// says so in the flags' words (--op-timeout), in Markdown and in JSON, as
// stderr does; not in the engine's (Plan.Loop.OpTimeout).
func TestReportNamesTheFlags(t *testing.T) {
	addr, sock := silentPair(t, "redis.sock")
	dir := t.TempDir()
	md, js := filepath.Join(dir, "report.md"), filepath.Join(dir, "report.json")
	code, _, errs := dbsock(t, "run", "redis", "--provider", "external", "--op-timeout", "300ms", "-q", "--n", "10",
		"--redis-addr", addr, "--redis-socket", sock, "--out", md, "--out", js)
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitFailed, errs)
	}
	for _, path := range []string{md, js} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out := string(b); !strings.Contains(out, "did not answer within 300ms (--op-timeout)") || strings.Contains(out, "Plan.") {
			t.Errorf("%s does not name --op-timeout, or names the engine's fields:\n%s", filepath.Base(path), out)
		}
	}
}
