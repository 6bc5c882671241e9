package drivers

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeServer accepts on 127.0.0.1 and hands each connection to serve.
func fakeServer(t *testing.T, serve func(net.Conn)) Endpoint {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
	return Endpoint{Transport: TCP, Address: l.Addr().String()}
}

// TestSniff: what Sniff says of a server that greets, hangs up, answers
// PING or waits, with the kinds a test registers (the targets' own kinds
// are tested in their packages).
func TestSniff(t *testing.T) {
	RegisterKind(Kind{Order: 2, Waits: "Y", SocketMode: "Y: mode 777", ExecSetup: "Y's statistics", Pong: func(b []byte) string {
		if strings.HasPrefix(string(b), "+PONG") {
			return "a pong server"
		}
		return ""
	}})
	RegisterKind(Kind{Order: 1, Waits: "X", Greeting: func(b []byte) string {
		if v, ok := strings.CutPrefix(string(b), "HELLO "); ok {
			return "a hello server (" + v + ")"
		}
		return ""
	}})
	for _, tt := range []struct {
		name  string
		serve func(net.Conn)
		want  string
	}{
		{"greets", func(c net.Conn) { c.Write([]byte("HELLO 1.2")); time.Sleep(time.Second) }, "a hello server (1.2)"},
		{"garbage", func(c net.Conn) { c.Write([]byte("\x00\xffjunk")) }, `a server that speaks first, with "\x00\xffjunk"`},
		{"closer", func(c net.Conn) {}, "a server that hangs up at once, before any client speaks"},
		{"pong", func(c net.Conn) {
			buf := make([]byte, 64)
			c.Read(buf)
			c.Write([]byte("+PONG\r\n"))
		}, `a pong server (it answered PING with "+PONG\r\n")`},
		{"other answer", func(c net.Conn) {
			buf := make([]byte, 64)
			c.Read(buf)
			c.Write([]byte("NO\r\n"))
		}, `a server that answered PING with "NO\r\n"`},
		{"waits", func(c net.Conn) { time.Sleep(2 * time.Second) }, "a server that waits for a handshake of its own (as X and Y servers do)"},
		{"hangs up on ping", func(c net.Conn) {
			buf := make([]byte, 64)
			c.Read(buf)
		}, "a server that hangs up on a PING line (as X and Y servers do)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sniff(context.Background(), fakeServer(t, tt.serve)); got != tt.want {
				t.Errorf("Sniff = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Sniff(context.Background(), Endpoint{Transport: Unix, Address: "/nonexistent/x.sock"}); !strings.HasPrefix(got, "nothing that accepts connections") {
		t.Errorf("Sniff of no socket = %q", got)
	}
	if got := socketModes(); got != " (Y: mode 777)" {
		t.Errorf("socketModes() = %q", got)
	}
	if got := ExecSetups(); len(got) != 1 || got[0] != "Y's statistics" {
		t.Errorf("ExecSetups() = %q", got)
	}
}
