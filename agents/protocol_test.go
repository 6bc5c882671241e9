package agents_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
)

// TestNewOpen: each path's open message says where to dial in the fields
// an agent reads (host and port, or the socket), with the CA on tls only.
func TestNewOpen(t *testing.T) {
	for _, tc := range []struct {
		ep         drivers.Endpoint
		ca         string
		host, sock string
		port       int
		err        string
	}{
		{ep: drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:6379"}, host: "127.0.0.1", port: 6379},
		{ep: drivers.Endpoint{Transport: drivers.TCP6, Address: "[::1]:5432"}, host: "::1", port: 5432},
		{ep: drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/x/.s.PGSQL.5432"}, sock: "/tmp/x/.s.PGSQL.5432"},
		{ep: drivers.Endpoint{Transport: drivers.TLS, Address: "127.0.0.1:6380", TLS: &tls.Config{ServerName: "localhost"}}, ca: "PEM", host: "127.0.0.1", port: 6380},
		{ep: drivers.Endpoint{Transport: drivers.TLS, Address: "127.0.0.1:6380", TLS: &tls.Config{}}, err: "no CA certificate"},
		{ep: drivers.Endpoint{Transport: drivers.TCP, Address: "10.0.0.1:6379"}, err: "not a loopback address"},
	} {
		o, err := agents.NewOpen("c1", "redis", tc.ep, "tok", "", []byte(tc.ca))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.ep, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.ep, err)
		}
		if o.Host != tc.host || o.Port != tc.port || o.Socket != tc.sock || o.CAPEM != tc.ca || o.Path != string(tc.ep.Transport) || o.Network != tc.ep.Transport.Network() {
			t.Errorf("%s: open %+v", tc.ep, o)
		}
		if tc.ca != "" && o.ServerName != "localhost" {
			t.Errorf("%s: server name %q", tc.ep, o.ServerName)
		}
	}
}
