// Package testutil holds helpers shared by dbsock's integration tests.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// RequireEnv names the environment variable that turns a missing server
// binary from a skip into a failure; .ci/run sets it so that CI can never
// pass by skipping the real-server tests.
const RequireEnv = "DBSOCK_REQUIRE_SERVERS"

// NeedAny skips (or, under RequireEnv, fails) the test unless one of the
// named binaries is on PATH or in an sbin directory.
func NeedAny(t testing.TB, names ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real server; skipped with -short")
	}
	for _, n := range names {
		if _, err := exec.LookPath(n); err == nil {
			return
		}
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + n); len(m) > 0 {
			return
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin"} {
			if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
				return
			}
		}
	}
	msg := "none of " + strings.Join(names, ", ") + " is installed (run scripts/install-deps.sh)"
	if os.Getenv(RequireEnv) != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Children returns the PIDs of live processes whose parent is this process.
func Children(t testing.TB) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid ...
		s := string(b)
		rest := s[strings.LastIndexByte(s, ')')+2:]
		f := strings.Fields(rest)
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(self) {
			out = append(out, pid)
		}
	}
	return out
}

// TempDirs lists the entries of dir whose names start with "dbsock-".
func TempDirs(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "dbsock-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// AssertLoopbackOnly checks in /proc/net/tcp and tcp6 that every listening
// socket on addr's port is bound to a loopback address, 127.0.0.1 or ::1
// (the tcp6 path), never to all interfaces.
func AssertLoopbackOnly(t *testing.T, addr string) {
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
			// ::1 as /proc/net/tcp6 prints it: four 32-bit words, each in
			// host (little-endian) order.
			if fields[1] != "0100007F:"+hexPort && fields[1] != "00000000000000000000000001000000:"+hexPort {
				t.Fatalf("port %d listens on %s (%s), not on 127.0.0.1 and ::1 only", port, fields[1], f)
			}
		}
	}
	if !found {
		t.Fatalf("no listening socket on port %d in /proc/net/tcp", port)
	}
}
