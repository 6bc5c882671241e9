package memcached_test

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/targets/memcached"
	"github.com/dbsock/dbsock/targets/targettest"
)

// name is the target under test.
const name = "memcached"

func TestLocal(t *testing.T) {
	rep := pipelinetest.Run(t, name, "local", "memcached")
	if tg := rep.Targets[0]; !strings.Contains(tg.Serving, "two memcached instances") || tg.Server.Product != "memcached" {
		t.Errorf("the report does not say what serves memcached: %+v", tg)
	}
}

func TestDocker(t *testing.T)  { pipelinetest.Run(t, name, "docker") }
func TestCompose(t *testing.T) { pipelinetest.Run(t, name, "compose") }

// TestExternal measures a memcached pair that is already running.
func TestExternal(t *testing.T) {
	srv := targettest.Local(t, name, "memcached")
	if err := pipelinetest.Mismatched(t, name, srv.TCP(), srv.Unix()); err != nil {
		t.Fatalf("the right endpoints: %v", err)
	}
}

// TestWrongSocket: a Unix socket that is not memcached's is said to be so.
func TestWrongSocket(t *testing.T) {
	srv := targettest.Local(t, name, "memcached")
	redis := targettest.Local(t, "redis", "redis-server")
	err := pipelinetest.Mismatched(t, name, srv.TCP(), drivers.Endpoint{Transport: drivers.Unix, Address: redis.Unix().Address})
	targettest.Contains(t, err, "memcached", redis.Unix().Address)
}

func TestParseConns(t *testing.T) {
	out := "STAT 23:addr unix:/s/m.sock\r\nSTAT 23:state conn_listening\r\nSTAT 24:addr ?:<AF 0>\r\nSTAT 24:listen_addr unix:/s/m.sock\r\nSTAT 24:state conn_parse_cmd\r\nEND\r\n"
	v, err := memcached.ParseConns(out, "@")
	if err != nil || v.Transport != drivers.Unix {
		t.Fatalf("unix: %+v, %v", v, err)
	}
	out = "STAT 25:addr tcp:127.0.0.1:5000\r\nSTAT 25:listen_addr tcp:127.0.0.1:11211\r\nSTAT 25:state conn_parse_cmd\r\nEND\r\n"
	if v, err := memcached.ParseConns(out, "127.0.0.1:5000"); err != nil || v.Transport != drivers.TCP {
		t.Fatalf("tcp: %+v, %v", v, err)
	}
	if _, err := memcached.ParseConns(out, "127.0.0.1:6000"); err == nil {
		t.Fatal("a listing without this connection verified it")
	}
	// Through docker-proxy: the connection off loopback running this
	// command, not an idle one.
	out = "STAT 26:addr tcp:172.18.0.1:40000\r\nSTAT 26:listen_addr tcp:172.18.0.2:11211\r\nSTAT 26:state conn_waiting\r\n" +
		"STAT 27:addr tcp:172.18.0.1:40002\r\nSTAT 27:listen_addr tcp:172.18.0.2:11211\r\nSTAT 27:state conn_parse_cmd\r\nEND\r\n"
	if v, err := memcached.ParseConns(out, "127.0.0.1:5000"); err != nil || v.Peer != "172.18.0.1:40002" {
		t.Fatalf("through a proxy: %+v, %v", v, err)
	}
}

// TestOnTLSListener: TLS needs both the server's ssl_enabled and the
// client's session.
func TestOnTLSListener(t *testing.T) {
	n := drivers.Negotiated{TLSVersion: "TLS 1.3", TLSCipher: "TLS_AES_128_GCM_SHA256"}
	tcp := drivers.Verification{Transport: drivers.TCP, Evidence: "stats conns: addr tcp:127.0.0.1:5000"}
	on, off := "STAT maxconns 1024\r\nSTAT ssl_enabled yes\r\n", "STAT maxconns 1024\r\nSTAT ssl_enabled no\r\n"
	for _, tt := range []struct {
		settings string
		n        drivers.Negotiated
		want     drivers.Transport
	}{
		{on, n, drivers.TLS},
		{on, drivers.Negotiated{}, drivers.TCP},
		{off, drivers.Negotiated{}, drivers.TCP},
		{off, n, drivers.TCP},
	} {
		if v := memcached.OnTLSListener(tcp, tt.settings, tt.n); v.Transport != tt.want {
			t.Errorf("%q with %+v: %s, want %s (%s)", tt.settings, tt.n, v.Transport, tt.want, v.Evidence)
		}
	}
}
