package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// startLocal starts a real server through the local provider for tests
// that need one running "outside" the command under test.
func startLocal(t *testing.T, target string) *supply.Server {
	t.Helper()
	l := supply.NewLocal()
	t.Cleanup(func() { _ = l.Close() })
	tt, ok := targets.Lookup(target)
	if !ok {
		t.Fatalf("no target %s", target)
	}
	srv, err := l.Supply(context.Background(), tt.Supply())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

func netListenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }

// shortTempDir is a temp dir with a path short enough to serve as $TMPDIR
// for dbsock (socket paths must fit in 107 bytes; t.TempDir's do not).
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "t")
	if err != nil {
		t.Fatal(err)
	}
	// Servers that run as their own users (MariaDB as mysql, PostgreSQL as
	// postgres) must be able to enter it, as they can enter /tmp.
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startDbsock starts bin with args and TMPDIR=tmp and returns it with a
// scanner over its stderr; it is killed when the test ends.
func startDbsock(t *testing.T, bin, tmp string, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(bin, onePlacement(args)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a no-op once it has exited
	return cmd, bufio.NewScanner(stderr)
}

// waitForLine reads stderr lines until one contains s, and returns them.
func waitForLine(sc *bufio.Scanner, s string) []string {
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), s) {
			break
		}
	}
	return lines
}

// incompleteOps counts the ops of target's runs marked incomplete: an
// interrupted round keeps both transports' runs, with whatever blocks ran.
func incompleteOps(rep *results.Report, target string) int64 {
	var n int64
	for _, run := range rep.Runs {
		if run.Target == target && run.Incomplete {
			n += run.N
		}
	}
	return n
}
