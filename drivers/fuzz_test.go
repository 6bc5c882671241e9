package drivers

import (
	"net"
	"net/netip"
	"testing"
)

func FuzzEndpointValidate(f *testing.F) {
	for _, s := range []string{"127.0.0.1:3306", "[::1]:1", "10.0.0.1:1", "0.0.0.0:1", "localhost:1", "[::ffff:127.0.0.1]:1", ":1", "host:", "a:b:c", "/tmp/x.sock", "x.sock", ""} {
		f.Add("tcp", s)
		f.Add("unix", s)
	}
	f.Fuzz(func(t *testing.T, network, addr string) {
		ep := Endpoint{Transport: Transport(network), Address: addr}
		if err := ep.Validate(); err != nil {
			return
		}
		if ep.Transport == Unix && (len(addr) == 0 || addr[0] != '/' || len(addr) > MaxSocketPath) {
			t.Fatalf("accepted unix path %q", addr)
		}
		if ep.Transport == TCP {
			host, _, _ := net.SplitHostPort(addr)
			if ip, err := netip.ParseAddr(host); err != nil || !ip.Unmap().IsLoopback() {
				t.Fatalf("accepted non-loopback tcp address %q", addr)
			}
		}
		if ep.Transport != TCP && ep.Transport != Unix {
			t.Fatalf("accepted transport %q", network)
		}
	})
}
