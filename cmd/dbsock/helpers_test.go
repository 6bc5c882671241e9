package main

import (
	"context"
	"net"
	"os"
	"testing"

	"github.com/dbsock/dbsock/compose"
)

// startLocal starts a real server through the local provider for tests
// that need one running "outside" the command under test.
func startLocal(t *testing.T, target string) *compose.Server {
	t.Helper()
	l := compose.NewLocal()
	t.Cleanup(func() { _ = l.Close() })
	srv, err := l.Supply(context.Background(), target)
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
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
