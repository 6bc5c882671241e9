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

func TestSniff(t *testing.T) {
	greeting := "\x4a\x00\x00\x00\x0a5.5.5-10.11.19-MariaDB\x00rest"
	for _, tt := range []struct {
		name  string
		serve func(net.Conn)
		want  string
	}{
		{"mysql", func(c net.Conn) { c.Write([]byte(greeting)); time.Sleep(time.Second) }, "a MySQL-protocol server (10.11.19-MariaDB)"},
		{"garbage", func(c net.Conn) { c.Write([]byte("\x00\xffjunk")) }, `a server that speaks first, with "\x00\xffjunk"`},
		{"closer", func(c net.Conn) {}, "a server that hangs up at once, before any client speaks"},
		{"redis", func(c net.Conn) {
			buf := make([]byte, 64)
			c.Read(buf)
			c.Write([]byte("+PONG\r\n"))
		}, `a Redis server (it answered PING with "+PONG\r\n")`},
		{"memcached", func(c net.Conn) {
			buf := make([]byte, 64)
			c.Read(buf)
			c.Write([]byte("ERROR\r\n"))
		}, "a memcached server"},
		{"waits", func(c net.Conn) { time.Sleep(2 * time.Second) }, "waits for a handshake of its own"},
		{"hangs up on ping", func(c net.Conn) {
			buf := make([]byte, 64)
			c.Read(buf)
		}, "hangs up on a Redis PING"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sniff(context.Background(), fakeServer(t, tt.serve)); !strings.Contains(got, tt.want) {
				t.Errorf("Sniff = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Sniff(context.Background(), Endpoint{Transport: Unix, Address: "/nonexistent/x.sock"}); !strings.HasPrefix(got, "nothing that accepts connections") {
		t.Errorf("Sniff of no socket = %q", got)
	}
}
