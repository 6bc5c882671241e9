package agents_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
)

// TestFloorAgentOnASilentServer: the C agent's floor connection has no
// socket timeout of its own (a timed blocking call costs the kernel's
// floor a timer per op), so a server that greets, takes the hello and
// then never echoes is bounded by dbsock: the block ends with the hung
// agent's error within the op timeout and the grace, and no process of
// the agent is left.
func TestFloorAgentOnASilentServer(t *testing.T) {
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	spec, err := agents.For(".", "c", "floor", family("floor"), "")
	if err != nil {
		needStack(t, err)
	}
	l, sock := listenUnix(t, "floorhang", "floor.sock")
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write(append([]byte{5}, "floor"...)) // the greeting
		var hdr [2]byte                        // the hello: 0, its length, its text
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		if _, err := io.ReadFull(c, make([]byte, hdr[1])); err != nil {
			return
		}
		c.Write(append([]byte{4}, "ok 1"...))
		io.Copy(io.Discard, io.LimitReader(c, 1<<20)) // takes the pings, answers none
	}()
	a, err := agents.Start(context.Background(), spec, limits)
	if err != nil {
		t.Fatal(err)
	}
	pid := a.PID()
	o, err := agents.NewOpen("c1", "floor", drivers.Endpoint{Transport: drivers.Unix, Address: sock}, agents.Token("c1"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Open(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = a.Block(context.Background(), agents.Block{ID: "c1", Keys: []any{int64(4), int64(4), int64(4)}, ValueLength: 4})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "it hung: no answer to block c1 of 3 keys within") {
		t.Fatalf("a block on a server that never echoes: %v", err)
	}
	if limit := limits.OpTimeout + limits.Grace + 3*limits.PerOp + 2*time.Second; took > limit {
		t.Errorf("the error took %s, more than %s", took, limit)
	}
	assertGone(t, pid)
	a.Close()
}

// listenUnix listens on a Unix socket name in a directory of its own
// under /tmp (short: a socket's path has a limit), both removed when the
// test ends; it returns the listener and the socket's path.
func listenUnix(t *testing.T, prefix, name string) (net.Listener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, name)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, sock
}
