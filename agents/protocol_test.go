package agents_test

import (
	"crypto/tls"
	"errors"
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

// TestSupport: a target's Support gives a stack's default library, the one
// asked for when it has it, an error wrapping ErrNoLibrary that names what
// it has otherwise, and why a stack is not measured on tls, the whole
// target's reason first.
func TestSupport(t *testing.T) {
	s := &agents.Support{Libraries: map[string][]string{"python": {"a", "b"}}, NoTLS: map[string]string{"c": "no TLS in c"}}
	if lib, err := s.Library("python", "x", ""); lib != "a" || err != nil {
		t.Errorf("default: %q, %v", lib, err)
	}
	if lib, err := s.Library("python", "x", "b"); lib != "b" || err != nil {
		t.Errorf("asked for b: %q, %v", lib, err)
	}
	if _, err := s.Library("python", "x", "z"); !errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "(it has a, b)") {
		t.Errorf("asked for z: %v", err)
	}
	if _, err := (*agents.Support)(nil).Library("node", "x", ""); !errors.Is(err, agents.ErrNoLibrary) {
		t.Errorf("a target without support: %v", err)
	}
	if _, err := s.Library("cobol", "x", ""); err == nil || errors.Is(err, agents.ErrNoLibrary) {
		t.Errorf("an unknown stack: %v", err)
	}
	if s.NoTLSFor("c") != "no TLS in c" || s.NoTLSFor("python") != "" {
		t.Error("per-stack tls reasons")
	}
	s.NoTLS[""] = "the server cannot show it"
	if s.NoTLSFor("python") != "the server cannot show it" || s.NoTLSFor("c") != "the server cannot show it" {
		t.Error("the target's tls reason comes first")
	}
}
