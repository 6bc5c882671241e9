package floor

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets/echo"
)

// serve runs a floor server in this process on a TCP listener and a Unix
// socket, and returns their endpoints.
func serve(t *testing.T) (tcp, unix drivers.Endpoint) {
	t.Helper()
	s := newServer()
	lt, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lu, err := net.Listen("unix", filepath.Join(t.TempDir(), "floor.sock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []net.Listener{lt, lu} {
		t.Cleanup(func() { l.Close() })
		go func() { _ = s.Serve(l) }()
	}
	return drivers.Endpoint{Transport: drivers.TCP, Address: lt.Addr().String()}, drivers.Endpoint{Transport: drivers.Unix, Address: lu.Addr().String()}
}

// hello opens a connection on ep as an agent does: the greeting, a hello
// with token, the server's number of it; then one ping-pong.
func hello(t *testing.T, ep drivers.Endpoint, token string) (net.Conn, string) {
	t.Helper()
	c, err := net.Dial(ep.Transport.Network(), ep.Address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := echo.ReadGreeting(c); err != nil {
		t.Fatal(err)
	}
	f, err := echo.Frame("hello " + token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(append(f, "ping"...)); err != nil {
		t.Fatal(err)
	}
	ok, err := echo.ReadFrame(c)
	if err != nil || !strings.HasPrefix(ok, "ok ") {
		t.Fatalf("answer to the hello: %q, %v", ok, err)
	}
	back := make([]byte, 4)
	if _, err := c.Read(back); err != nil || string(back) != "ping" {
		t.Fatalf("the ping-pong after the hello: %q, %v", back, err)
	}
	return c, strings.TrimPrefix(ok, "ok ")
}

// TestFinder: dbsock's own connection, on either path, finds each
// connection that said hello on the path it is on, with the number the
// connection was given and its own address; a token nobody said is not
// found, and a claim that contradicts the server is refused. dbsock's own
// driver, which sends no hello, still ping-pongs.
func TestFinder(t *testing.T) {
	tcp, unix := serve(t)
	ctx := context.Background()
	ctcp, idTCP := hello(t, tcp, "tok-tcp")
	_, idUnix := hello(t, unix, "tok-unix")
	for _, admin := range []drivers.Endpoint{tcp, unix} {
		f, err := New().OpenFinder(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		v, err := f.Find(ctx, drivers.Claim{Token: "tok-tcp", ConnID: idTCP, LocalAddr: ctcp.LocalAddr().String()})
		if err != nil || v.Transport != drivers.TCP || !drivers.SameAddr(v.Peer, ctcp.LocalAddr().String()) {
			t.Errorf("asked over %s for the tcp connection: %+v, %v", admin.Transport, v, err)
		}
		v, err = f.Find(ctx, drivers.Claim{Token: "tok-unix", ConnID: idUnix})
		if err != nil || v.Transport != drivers.Unix || !strings.Contains(v.Evidence, "pid ") {
			t.Errorf("asked over %s for the unix connection: %+v, %v", admin.Transport, v, err)
		}
		if _, err := f.Find(ctx, drivers.Claim{Token: "tok-none"}); err == nil || !strings.Contains(err.Error(), "no connection that said hello with token tok-none") {
			t.Errorf("a token nobody said: %v", err)
		}
		wrongID, _ := strconv.Atoi(idUnix)
		if _, err := f.Find(ctx, drivers.Claim{Token: "tok-unix", ConnID: strconv.Itoa(wrongID + 100)}); err == nil {
			t.Error("a connection number the server did not give was taken")
		}
	}
	for _, ep := range []drivers.Endpoint{tcp, unix} {
		c, err := New().Open(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := c.Do(ctx); err != nil {
				t.Fatalf("dbsock's own driver over %s: %v", ep.Transport, err)
			}
		}
		if v, err := c.Verify(ctx); err != nil || v.Transport != ep.Transport {
			t.Errorf("dbsock's own driver over %s: %+v, %v", ep.Transport, v, err)
		}
		c.Close()
	}
}

// TestFinderForgets: once a connection closes, its token is found no
// more.
func TestFinderForgets(t *testing.T) {
	_, unix := serve(t)
	ctx := context.Background()
	c, _ := hello(t, unix, "tok-gone")
	f, err := New().OpenFinder(ctx, unix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := f.Find(ctx, drivers.Claim{Token: "tok-gone"})
		if err != nil && strings.Contains(err.Error(), "no connection") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed connection is still found: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
