package drivers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/setting"
)

func TestEndpointValidate(t *testing.T) {
	long := "/" + strings.Repeat("a", MaxSocketPath)
	tests := []struct {
		name    string
		ep      Endpoint
		wantErr string
	}{
		{"tcp ok", Endpoint{Transport: TCP, Address: "127.0.0.1:3306"}, ""},
		{"tcp ipv6 ok", Endpoint{Transport: TCP, Address: "[::1]:6379"}, ""},
		{"tcp no port", Endpoint{Transport: TCP, Address: "127.0.0.1"}, "not HOST:PORT"},
		{"tcp empty host", Endpoint{Transport: TCP, Address: ":3306"}, "not HOST:PORT"},
		{"tcp named port", Endpoint{Transport: TCP, Address: "127.0.0.1:mysql"}, "is not a number from 1 to 65535"},
		{"tcp port zero", Endpoint{Transport: TCP, Address: "127.0.0.1:0"}, "is not a number from 1 to 65535"},
		{"tcp port too big", Endpoint{Transport: TCP, Address: "127.0.0.1:65536"}, "is not a number from 1 to 65535"},
		{"tcp port negative", Endpoint{Transport: TCP, Address: "127.0.0.1:-1"}, "is not a number from 1 to 65535"},
		{"tcp port plus", Endpoint{Transport: TCP, Address: "127.0.0.1:+80"}, "is not a number from 1 to 65535"},
		{"tcp other loopback ok", Endpoint{Transport: TCP, Address: "127.3.2.1:3306"}, ""},
		{"tcp mapped loopback ok", Endpoint{Transport: TCP, Address: "[::ffff:127.0.0.1]:3306"}, ""},
		{"tcp private net", Endpoint{Transport: TCP, Address: "10.0.0.1:6379"}, "not a loopback address"},
		{"tcp public", Endpoint{Transport: TCP, Address: "8.8.8.8:53"}, "not a loopback address"},
		{"tcp any", Endpoint{Transport: TCP, Address: "0.0.0.0:6379"}, "not a loopback address"},
		{"tcp ipv6 any", Endpoint{Transport: TCP, Address: "[::]:6379"}, "not a loopback address"},
		{"tcp name", Endpoint{Transport: TCP, Address: "example.com:6379"}, "never looks up a name"},
		{"tcp localhost", Endpoint{Transport: TCP, Address: "localhost:6379"}, "give 127.0.0.1"},
		{"tcp zone", Endpoint{Transport: TCP, Address: "[::1%lo]:6379"}, "not a loopback address"},
		{"unix ok", Endpoint{Transport: Unix, Address: "/run/mysqld/mysqld.sock"}, ""},
		{"unix relative", Endpoint{Transport: Unix, Address: "mysqld.sock"}, "not absolute"},
		{"unix too long", Endpoint{Transport: Unix, Address: long}, "OS limit is 107"},
		{"unknown transport", Endpoint{Transport: "udp", Address: "x"}, "unknown transport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.ep.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestEndpointStringHidesPassword(t *testing.T) {
	ep := Endpoint{Transport: TCP, Address: "127.0.0.1:1", User: "u", Password: "hunter2"}
	if s := ep.String(); strings.Contains(s, "hunter2") || !strings.Contains(s, "****") {
		t.Fatalf("String() = %q: want the password masked", s)
	}
}

// TestClassifyPeer: a client's address as servers print it is the path of
// its network in the table, tls when the server says it is encrypted.
func TestClassifyPeer(t *testing.T) {
	for peer, want := range map[string]Transport{
		"127.0.0.1:5555": TCP, "[::1]:5555": TCP6, "invalid AddrPort": Unix, "anonymous unix socket": Unix, "": Unix,
		"127.0.0.1": TCP, "127.0.0.1/32": TCP, "::1": TCP6, "[::1]": TCP6, "::1/128": TCP6, "::ffff:127.0.0.1": TCP,
		"::1:5432": TCP6, "/tmp/x.sock": Unix, "/tmp/redis.sock:0": Unix, "localhost": Unix, "unix": Unix,
		"app.example:40000": TCP, "172.18.0.1:40000": TCP,
	} {
		if got := ClassifyPeer(peer, false); got != want {
			t.Errorf("ClassifyPeer(%q) = %s, want %s", peer, got, want)
		}
	}
	for peer, want := range map[string]Transport{"127.0.0.1:5555": TLS, "[::1]:5555": TCP6, "": Unix} {
		if got := ClassifyPeer(peer, true); got != want {
			t.Errorf("ClassifyPeer(%q, secure) = %s, want %s", peer, got, want)
		}
	}
}

type fakeConn struct {
	v   Verification
	err error
}

func (f fakeConn) Do(context.Context) error                     { return nil }
func (f fakeConn) Verify(context.Context) (Verification, error) { return f.v, f.err }
func (f fakeConn) Close() error                                 { return nil }

func TestCheckTransport(t *testing.T) {
	ctx := context.Background()
	if _, err := CheckTransport(ctx, fakeConn{v: Verification{Transport: Unix}}, Endpoint{Transport: Unix}); err != nil {
		t.Fatalf("matching transport: %v", err)
	}
	_, err := CheckTransport(ctx, fakeConn{v: Verification{Transport: TCP, Evidence: "host 127.0.0.1:1"}}, Endpoint{Transport: Unix})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("mismatch: got %v, want ErrMismatch naming the evidence", err)
	}
	if _, err := CheckTransport(ctx, fakeConn{err: errors.New("boom")}, Endpoint{Transport: TCP}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("verify error: got %v", err)
	}
}

func TestWithinReturnsEvenIfTheStepIgnoresItsContext(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	err := Within(context.Background(), 50*time.Millisecond, func(context.Context) error { <-block; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("err %v after %s; want the deadline after about 50ms", err, time.Since(start))
	}
	if err := Within(context.Background(), time.Second, func(context.Context) error { return errors.New("no") }); err == nil || err.Error() != "no" {
		t.Fatalf("a failing step: %v", err)
	}
}

func TestExplainSaysWhatASocketPathReallyIs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.sock")
	fifo := filepath.Join(dir, "fifo.sock")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the file stays, nobody listens: a real stale socket
	for _, tt := range []struct{ path, want string }{
		{dir, "is a directory, not a socket: give the socket file inside it (for example " + stale + ")"},
		{file, "is a regular file, not a Unix socket"},
		{fifo, "is a FIFO (named pipe), not a Unix socket"},
		{"/dev/null", "is a character device, not a Unix socket"},
		{stale, "stale socket"},
	} {
		_, dialErr := net.Dial("unix", tt.path)
		if dialErr == nil {
			t.Fatalf("%s: dial succeeded", tt.path)
		}
		got := Explain(dialErr, Endpoint{Transport: Unix, Address: tt.path}).Error()
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.path, got, tt.want)
		}
		if tt.path != stale && strings.Contains(got, "stale socket") {
			t.Errorf("%s called stale: %q", tt.path, got)
		}
	}
}

func TestWentAway(t *testing.T) {
	for _, err := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE, net.ErrClosed, sql.ErrConnDone, driver.ErrBadConn,
		fmt.Errorf("read: %w", syscall.ECONNRESET), errors.New("redis: Conn is in a bad state: EOF"), errors.New("conn closed")} {
		if !WentAway(err) {
			t.Errorf("%v: not recognised as a server that went away", err)
		}
		if got := Explain(err, Endpoint{Transport: TCP, Address: "127.0.0.1:1"}).Error(); !strings.Contains(got, "went away") {
			t.Errorf("Explain(%v) = %q", err, got)
		}
	}
	for _, err := range []error{syscall.ECONNREFUSED, errors.New("syntax error"), context.DeadlineExceeded} {
		if WentAway(err) {
			t.Errorf("%v taken for a server that went away", err)
		}
	}
}

// TestSocketsAbort: Abort closes what was dialed, says so, and refuses
// what would be dialed after it.
func TestSocketsAbort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var s Sockets
	c, err := s.Dial(context.Background(), "tcp", l.Addr().String())
	if err != nil || s.Aborted() {
		t.Fatalf("dial: %v, aborted %v", err, s.Aborted())
	}
	if err := s.Abort(); err != nil || !s.Aborted() {
		t.Fatalf("abort: %v, aborted %v", err, s.Aborted())
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("the dialed connection still writes after Abort")
	}
	if _, err := s.Dial(context.Background(), "tcp", l.Addr().String()); !errors.Is(err, ErrAborted) {
		t.Fatalf("dial after Abort: %v, want ErrAborted", err)
	}
}

func TestKeyNames(t *testing.T) {
	if got := KeyNames(nil, []int64{3, 7}, false); len(got) != 2 || got[0] != "dbsock:user:3" || got[1] != "dbsock:user:7" {
		t.Errorf("reads: %v", got)
	}
	if got := KeyNames(nil, []int64{3}, true); len(got) != 1 || got[0] != "dbsock:user:3:n" {
		t.Errorf("updates: %v", got)
	}
	if got := KeyNames(nil, nil, false); len(got) != 1 || got[0] != "dbsock:user:1" {
		t.Errorf("no ids: %v", got)
	}
}

func TestValidateTellsTheTwoLoopbacks(t *testing.T) {
	for _, tt := range []struct {
		ep   Endpoint
		fail bool
	}{{Endpoint{Transport: TCP6, Address: "[::1]:5432"}, false}, {Endpoint{Transport: TCP6, Address: "127.0.0.1:5432"}, true}, {Endpoint{Transport: TCP6, Address: "[::1]"}, true}} {
		if err := tt.ep.Validate(); (err != nil) != tt.fail {
			t.Errorf("Validate(%s) = %v", tt.ep, err)
		}
	}
}

// TestTLSRecorder: a configuration made by a recorder records what its
// handshake negotiated, as the client saw it, and keeps its verification.
func TestTLSRecorder(t *testing.T) {
	var r TLSRecorder
	if r.Config(nil) != nil {
		t.Fatal("a nil configuration recorded")
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c, err := tls.Dial("tcp", srv.Listener.Addr().String(), r.Config(&tls.Config{RootCAs: pool, ServerName: "example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.ConnectionState()
	want := Negotiated{TLSVersion: tls.VersionName(st.Version), TLSCipher: tls.CipherSuiteName(st.CipherSuite)}
	if got := r.Negotiated(); got != want || got.TLSVersion != "TLS 1.3" {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
	if got := TLSOf(c); got != want {
		t.Errorf("TLSOf %+v, want %+v", got, want)
	}
	if _, err := tls.Dial("tcp", srv.Listener.Addr().String(), r.Config(&tls.Config{ServerName: "example.com"})); err == nil {
		t.Error("a server no root vouches for was trusted")
	}
}

// TestEndpointJSON: an endpoint read back from JSON renders as it did,
// "(password ****)" included, and the JSON never holds the password.
func TestEndpointJSON(t *testing.T) {
	ep := Endpoint{Transport: TCP, Address: "127.0.0.1:6379", User: "app", Password: "s3cret-value"}
	b, err := json.Marshal(ep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret-value") || strings.Contains(string(b), `"password"`) {
		t.Fatalf("the JSON holds the password: %s", b)
	}
	var back Endpoint
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.String() != ep.String() || back.Password != "" {
		t.Errorf("read back as %q, written as %q", back.String(), ep.String())
	}
	b, _ = json.Marshal(Endpoint{Transport: Unix, Address: "/tmp/s.sock"})
	if strings.Contains(string(b), "has_password") {
		t.Errorf("an endpoint without a password says it has one: %s", b)
	}
}

// TestRoutedPeers: the published and bridge paths are verified by a peer
// off loopback; the tcp path is not.
func TestRoutedPeers(t *testing.T) {
	for peer, want := range map[string]bool{"172.18.0.1": true, "172.18.0.1:40866": true, "172.18.0.1/32": true, "10.0.0.2:1": true,
		"127.0.0.1:5000": false, "127.0.0.1/32": false, "::1": false, "[::1]:5000": false, "/tmp/x.sock": false, "": false, "0.0.0.0": false} {
		if got := Routed(peer); got != want {
			t.Errorf("Routed(%q) = %v, want %v", peer, got, want)
		}
	}
	check := func(v Verification, want Transport) error {
		_, err := CheckTransport(context.Background(), fixedConn{v}, Endpoint{Transport: want})
		return err
	}
	routed := Verification{Transport: TCP, Peer: "172.18.0.1:40866", Evidence: "client addr=172.18.0.1:40866"}
	local := Verification{Transport: TCP, Peer: "127.0.0.1:40866", Evidence: "client addr=127.0.0.1:40866"}
	if check(routed, Published) != nil || check(routed, Bridge) != nil {
		t.Error("a peer across the bridge did not verify the published and bridge paths")
	}
	if check(local, Published) == nil || check(local, Bridge) == nil {
		t.Error("a loopback peer verified a path across the bridge")
	}
	if err := (Endpoint{Transport: Bridge, Address: "172.18.0.2:6379"}).Validate(); err != nil {
		t.Error(err)
	}
	if err := (Endpoint{Transport: Bridge, Address: "8.8.8.8:53"}).Validate(); err == nil {
		t.Error("a public address passed as a bridge address")
	}
	if err := (Endpoint{Transport: Published, Address: "8.8.8.8:53"}).Validate(); err == nil {
		t.Error("a published port off loopback passed")
	}
}

// TestServiceAndPodPaths: the service path is verified by the address of
// the container the client dialed from, the pod path by a loopback peer
// inside the server container's namespace; both are dialed from a
// namespace, and no other path is.
func TestServiceAndPodPaths(t *testing.T) {
	check := func(v Verification, ep Endpoint) error {
		_, err := CheckTransport(context.Background(), fixedConn{v}, ep)
		return err
	}
	neighbour := Verification{Transport: TCP, Peer: "172.18.0.3:40866", Evidence: "client addr=172.18.0.3:40866"}
	gateway := Verification{Transport: TCP, Peer: "172.18.0.1:40866", Evidence: "client addr=172.18.0.1:40866"}
	local := Verification{Transport: TCP, Peer: "127.0.0.1:40866", Evidence: "client addr=127.0.0.1:40866"}
	socket := Verification{Transport: Unix, Peer: "/sock/redis.sock", Evidence: "client addr=/sock/redis.sock:0"}
	service := Endpoint{Transport: Service, Address: "172.18.0.2:6379", Netns: "/proc/1/ns/net", From: "172.18.0.3"}
	pod := Endpoint{Transport: Pod, Address: "127.0.0.1:6379", Netns: "/proc/2/ns/net"}
	if err := check(neighbour, service); err != nil {
		t.Errorf("the neighbour's address did not verify the service path: %v", err)
	}
	for _, v := range []Verification{gateway, local, socket} {
		if err := check(v, service); !errors.Is(err, ErrMismatch) {
			t.Errorf("peer %s verified the service path from 172.18.0.3: %v", v.Peer, err)
		}
	}
	if err := check(local, pod); err != nil {
		t.Errorf("a loopback peer did not verify the pod path: %v", err)
	}
	for _, v := range []Verification{gateway, neighbour, socket} {
		if err := check(v, pod); !errors.Is(err, ErrMismatch) {
			t.Errorf("peer %s verified the pod path: %v", v.Peer, err)
		}
	}
	for _, ep := range []Endpoint{service, pod} {
		if err := ep.Validate(); err != nil {
			t.Error(err)
		}
		ep.Netns = ""
		if err := ep.Validate(); err == nil {
			t.Errorf("a %s endpoint without a namespace passed", ep.Transport)
		}
	}
	if err := (Endpoint{Transport: TCP, Address: "127.0.0.1:1", Netns: "/proc/1/ns/net"}).Validate(); err == nil {
		t.Error("a tcp endpoint dialed from a namespace passed")
	}
	if got := pod.String(); !strings.Contains(got, "from network namespace /proc/2/ns/net") {
		t.Errorf("the pod endpoint reads %q: it does not say where it is dialed from", got)
	}
}

// TestDialInANamespace dials from another network namespace: this
// process's own, entered by its file (a container's would need root and
// an engine; the integration tests dial those).
func TestDialInANamespace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("network namespaces are Linux's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := DialIn(context.Background(), "/proc/self/ns/net", "tcp", ln.Addr().String())
	if os.Geteuid() != 0 {
		if err == nil || !strings.Contains(err.Error(), "root") {
			t.Fatalf("without root: %v, want an error that says to run as root", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := DialIn(context.Background(), "/proc/no-such/ns/net", "tcp", ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("a namespace that is gone: %v", err)
	}
}

type fixedConn struct{ v Verification }

func (fixedConn) Do(context.Context) error                       { return nil }
func (c fixedConn) Verify(context.Context) (Verification, error) { return c.v, nil }
func (fixedConn) Close() error                                   { return nil }

// TestControlIsDiagnosedAsItsRoute: a refused connection on the A/A
// control tcp2 gets TCP's hint, as the path it repeats.
func TestControlIsDiagnosedAsItsRoute(t *testing.T) {
	ep := Endpoint{Transport: TCP2, Address: "127.0.0.1:1"}
	err := Explain(fmt.Errorf("dial: %w", syscall.ECONNREFUSED), ep)
	if !strings.Contains(err.Error(), "nothing accepts connections on 127.0.0.1:1") {
		t.Errorf("tcp2 refused: %v", err)
	}
	if err := ep.Validate(); err != nil {
		t.Errorf("a tcp2 endpoint on 127.0.0.1 is refused: %v", err)
	}
	if err := (Endpoint{Transport: TCP2, Address: "10.0.0.1:5"}).Validate(); err == nil {
		t.Error("a tcp2 endpoint off loopback is accepted")
	}
}

// TestNoTLSNamesThePathsSetting: a server that refuses TLS on the tls
// path is told to be left out of the paths, as a setting the error names
// (setting.Paths) and whoever shows it words: dbsock run as --paths.
func TestNoTLSNamesThePathsSetting(t *testing.T) {
	refused := errors.New("SSL is not enabled on the server")
	err := Explain(fmt.Errorf("connect: %w", refused), Endpoint{Transport: TLS, Address: "127.0.0.1:5432"})
	if !errors.Is(err, refused) {
		t.Errorf("the explained error does not wrap the driver's: %v", err)
	}
	var se *setting.Error
	if !errors.As(err, &se) || len(se.Fields()) != 1 || se.Fields()[0] != setting.Paths {
		t.Fatalf("%v: want an error naming %s", err, setting.Paths)
	}
	flags := func(f setting.Field) string { return map[setting.Field]string{setting.Paths: "--paths"}[f] }
	if got := setting.In(err, flags); !strings.Contains(got, "the server at 127.0.0.1:5432 does not offer TLS: turn TLS on in the server, or leave tls out of --paths") {
		t.Errorf("worded with flags: %q", got)
	}
}
