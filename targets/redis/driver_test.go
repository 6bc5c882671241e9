package redis

import (
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

func TestParseClientInfo(t *testing.T) {
	tests := []struct {
		name string
		line string
		want drivers.Transport
	}{
		{"tcp", "id=5 addr=127.0.0.1:50472 laddr=127.0.0.1:40841 fd=9 name= age=0 flags=N db=0", drivers.TCP},
		{"unix", "id=6 addr=/tmp/d/redis.sock:0 laddr=/tmp/d/redis.sock:0 fd=10 flags=U db=0", drivers.Unix},
		{"unix flag only", "id=7 addr=:0 laddr=:0 flags=U", drivers.Unix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseClientInfo(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if v.Transport != tt.want {
				t.Fatalf("transport = %s, want %s (%s)", v.Transport, tt.want, v.Evidence)
			}
		})
	}
	if _, err := ParseClientInfo("id=1 flags=N"); err == nil {
		t.Fatal("a line without addr must be an error")
	}
}

func TestParseInfo(t *testing.T) {
	got := ParseInfo("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n")
	if got.Product != "Redis" || got.Version != "7.0.15" {
		t.Fatalf("ParseInfo = %+v", got)
	}
	got = ParseInfo("# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n")
	if got.Product != "Valkey" || got.Version != "8.0.1" {
		t.Fatalf("ParseInfo(valkey) = %+v", got)
	}
}

func TestOptionsPoolOfOne(t *testing.T) {
	o := Options(drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/r.sock", Password: "p"})
	if o.Network != "unix" || o.Addr != "/tmp/r.sock" || o.PoolSize != 1 || o.Password != "p" {
		t.Fatalf("Options = %+v", o)
	}
}

func TestParseCommandStats(t *testing.T) {
	text := "# Commandstats\r\ncmdstat_info:calls=2,usec=40,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_get:calls=30000,usec=3956,usec_per_call=0.13,rejected_calls=0,failed_calls=0\r\n"
	s := ParseCommandStats(text, "get")
	if s.Calls != 30000 || s.ExecNs != 3956000 {
		t.Fatalf("got %+v, want 30000 calls and 3956 µs", s)
	}
	if s := ParseCommandStats(text, "set"); s.Calls != 0 || s.ExecNs != 0 {
		t.Fatalf("a command that never ran: %+v", s)
	}
}

// TestOneAttemptPerOp: go-redis retries a failed command by default; a
// retried command would be timed as one slow op.
func TestOneAttemptPerOp(t *testing.T) {
	if o := Options(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:6379"}); o.MaxRetries != -1 {
		t.Fatalf("MaxRetries %d, want -1 (none)", o.MaxRetries)
	}
}

// TestOnTLSPort: a TCP client is on TLS exactly when the server's own
// address for it is at the server's tls-port.
func TestOnTLSPort(t *testing.T) {
	n := drivers.Negotiated{TLSVersion: "TLS 1.3", TLSCipher: "TLS_AES_128_GCM_SHA256"}
	tests := []struct {
		line, tlsPort string
		want          drivers.Transport
	}{
		{"id=5 addr=127.0.0.1:50472 laddr=127.0.0.1:6380 fd=9 flags=N", "6380", drivers.TLS},
		{"id=5 addr=127.0.0.1:50472 laddr=127.0.0.1:6379 fd=9 flags=N", "6380", drivers.TCP},
		{"id=5 addr=127.0.0.1:50472 laddr=127.0.0.1:6379 fd=9 flags=N", "0", drivers.TCP},
		{"id=5 addr=127.0.0.1:50472 laddr=127.0.0.1:16380 fd=9 flags=N", "6380", drivers.TCP},
		{"id=5 addr=[::1]:50472 laddr=[::1]:6379 fd=9 flags=N", "", drivers.TCP6},
	}
	for _, tt := range tests {
		v, err := ParseClientInfo(tt.line)
		if err != nil {
			t.Fatal(err)
		}
		v = OnTLSPort(v, tt.tlsPort, n)
		if v.Transport != tt.want {
			t.Errorf("%q at tls-port %q: %s, want %s (%s)", tt.line, tt.tlsPort, v.Transport, tt.want, v.Evidence)
		}
		if got := v.Negotiated == n; got != (tt.want == drivers.TLS) {
			t.Errorf("%q at tls-port %q: negotiated %+v", tt.line, tt.tlsPort, v.Negotiated)
		}
	}
}
