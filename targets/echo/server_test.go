package echo

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// TestServerFinds: on a real echo server (in this process), a connection
// that says hello on the socket is found by dbsock's own connection over
// TCP as a unix one, and keeps ping-ponging; dbsock's own driver, which
// sends no hello, ping-pongs as before.
func TestServerFinds(t *testing.T) {
	s := newServer()
	lt, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lu, err := net.Listen("unix", filepath.Join(t.TempDir(), "echo.sock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []net.Listener{lt, lu} {
		defer l.Close()
		go func() { _ = s.Serve(l) }()
	}
	tcp := drivers.Endpoint{Transport: drivers.TCP, Address: lt.Addr().String()}
	c, err := net.Dial("unix", lu.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ReadGreeting(c); err != nil {
		t.Fatal(err)
	}
	f, _ := Frame("hello tok-echo")
	if _, err := c.Write(f); err != nil {
		t.Fatal(err)
	}
	if ok, err := ReadFrame(c); err != nil || !strings.HasPrefix(ok, "ok ") {
		t.Fatalf("answer to the hello: %q, %v", ok, err)
	}
	ctx := context.Background()
	finder, err := New(0).OpenFinder(ctx, tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer finder.Close()
	if v, err := finder.Find(ctx, drivers.Claim{Token: "tok-echo"}); err != nil || v.Transport != drivers.Unix || !strings.HasPrefix(v.Evidence, "echo server sees") {
		t.Errorf("found %+v, %v; want the unix connection", v, err)
	}
	back := make([]byte, 4)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(back); err != nil || string(back) != "ping" {
		t.Errorf("ping-pong after the hello: %q, %v", back, err)
	}
	own, err := New(0).Open(ctx, tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.Do(ctx); err != nil {
		t.Errorf("dbsock's own driver: %v", err)
	}
}
