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

// TestLibrary: a stack's stack.json gives its default library for a
// target, the one asked for when it has it, an error wrapping
// ErrNoLibrary that names what it has otherwise (and why it has none,
// where it says), and why it is not measured on tls, the target's own
// reason (Support) first.
func TestLibrary(t *testing.T) {
	dir := t.TempDir()
	writeStack(t, dir, "mini", `{"language": "Mini", "command": ["agent.py"], "packages": [],
		"libraries": {"a": [], "b": []}, "targets": {"x": {"libraries": ["a", "b"], "no_tls": "no TLS in a"},
		"w": {"missing": "its w client cannot log in"}, "v": {"libraries": ["a"], "no_connect": "a queries at connect"}}}`, nil)
	if lib, err := agents.Library(dir, "mini", "x", ""); lib != "a" || err != nil {
		t.Errorf("default: %q, %v", lib, err)
	}
	if lib, err := agents.Library(dir, "mini", "x", "b"); lib != "b" || err != nil {
		t.Errorf("asked for b: %q, %v", lib, err)
	}
	if _, err := agents.Library(dir, "mini", "x", "z"); !errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "(it has a, b)") {
		t.Errorf("asked for z: %v", err)
	}
	if _, err := agents.Library(dir, "mini", "y", ""); !errors.Is(err, agents.ErrNoLibrary) {
		t.Errorf("a target it does not have: %v", err)
	}
	if _, err := agents.Library(dir, "mini", "w", ""); !errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "for w: its w client cannot log in") {
		t.Errorf("a target it says why it has no library for: %v", err)
	}
	if _, err := agents.Library(dir, "cobol", "x", ""); err == nil || errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "want one of mini") {
		t.Errorf("an unknown stack: %v", err)
	}
	if agents.NoConnect(dir, "mini", "v") != "a queries at connect" || agents.NoConnect(dir, "mini", "x") != "" {
		t.Error("the stack's connect reasons")
	}
	if agents.NoTLS(dir, "mini", "x", nil) != "no TLS in a" || agents.NoTLS(dir, "mini", "y", nil) != "" {
		t.Error("the stack's tls reasons")
	}
	if got := agents.NoTLS(dir, "mini", "x", &agents.Support{NoTLS: "the server cannot show it"}); got != "the server cannot show it" {
		t.Errorf("the target's tls reason comes first: %q", got)
	}
}
