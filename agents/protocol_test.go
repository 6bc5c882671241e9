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
// target's protocol family (a pooler's is its database's: the registry
// says so, Family), the one asked
// for when it has it, an error wrapping ErrNoLibrary that names the target
// and what it has otherwise (and why it has none, where it says), and why
// it is not measured on tls, the target's own reason (Support) first.
func TestLibrary(t *testing.T) {
	dir := t.TempDir()
	writeStack(t, dir, "mini", `{"language": "Mini", "command": ["agent.py"], "packages": [],
		"libraries": {"a": [], "b": []}, "families": {"postgres": {"libraries": ["a", "b"], "no_tls": "no TLS in a"},
		"memcached": {"missing": "its w client cannot log in"}, "mysql": {"libraries": ["a"], "no_connect": "a queries at connect"}}}`, nil)
	for _, target := range []string{"postgres", "pgbouncer"} {
		if family(target) != "postgres" {
			t.Errorf("%s's protocol family is %q; want postgres", target, family(target))
		}
		if lib, err := agents.Library(dir, "mini", target, family(target), ""); lib != "a" || err != nil {
			t.Errorf("%s's default: %q, %v", target, lib, err)
		}
	}
	if lib, err := agents.Library(dir, "mini", "pgbouncer", "postgres", "b"); lib != "b" || err != nil {
		t.Errorf("asked for b: %q, %v", lib, err)
	}
	if _, err := agents.Library(dir, "mini", "pgbouncer", "postgres", "z"); !errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), `"z" for pgbouncer (it has a, b)`) {
		t.Errorf("asked for z: %v", err)
	}
	if _, err := agents.Library(dir, "mini", "redis", "redis", ""); !errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "for redis") {
		t.Errorf("a family it does not have: %v", err)
	}
	if _, err := agents.Library(dir, "mini", "memcached", "memcached", ""); !errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "for memcached: its w client cannot log in") {
		t.Errorf("a family it says why it has no library for: %v", err)
	}
	if _, err := agents.Library(dir, "cobol", "postgres", "postgres", ""); err == nil || errors.Is(err, agents.ErrNoLibrary) || !strings.Contains(err.Error(), "want one of mini") {
		t.Errorf("an unknown stack: %v", err)
	}
	if _, err := agents.Family("nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch is not a target an agent measures") {
		t.Errorf("the family of a target dbsock does not know: %v", err)
	}
	if agents.NoConnect(dir, "mini", "mysql") != "a queries at connect" || agents.NoConnect(dir, "mini", "postgres") != "" {
		t.Error("the stack's connect reasons")
	}
	if agents.NoTLS(dir, "mini", "postgres", nil) != "no TLS in a" || agents.NoTLS(dir, "mini", "mysql", nil) != "" {
		t.Error("the stack's tls reasons")
	}
	if got := agents.NoTLS(dir, "mini", "postgres", &agents.Support{NoTLS: "the server cannot show it"}); got != "the server cannot show it" {
		t.Errorf("the target's tls reason comes first: %q", got)
	}
}

// family is target's protocol family, as the registry says it ("" for a
// target it does not know).
func family(target string) string {
	f, _ := agents.Family(target)
	return f
}
