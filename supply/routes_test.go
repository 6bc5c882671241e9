package supply

import (
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestTwinRoutes: the published, bridge, service and pod paths to a
// server's twin, as both container providers give them.
func TestTwinRoutes(t *testing.T) {
	tcp := drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:40001", User: "u", Password: "p"}
	r := Twin{TCP: tcp, IP: "172.18.0.2", Port: 5432, PID: 42, From: &Neighbour{IP: "172.18.0.3", PID: 43}}.Routes()
	for _, c := range []struct {
		ep                   drivers.Endpoint
		transport            drivers.Transport
		address, netns, from string
	}{
		{r[0], drivers.Published, "127.0.0.1:40001", "", ""},
		{r[1], drivers.Bridge, "172.18.0.2:5432", "", ""},
		{r[3], drivers.Service, "172.18.0.2:5432", "/proc/43/ns/net", "172.18.0.3"},
		{r[2], drivers.Pod, "127.0.0.1:5432", "/proc/42/ns/net", ""},
	} {
		if c.ep.Transport != c.transport || c.ep.Address != c.address || c.ep.Netns != c.netns || c.ep.From != c.from || c.ep.Password != "p" || c.ep.User != "u" {
			t.Errorf("%s: got %+v, want %s from %q in %q", c.transport, c.ep, c.address, c.from, c.netns)
		}
	}
	if r := (Twin{TCP: tcp, IP: "172.18.0.2", Port: 5432, PID: 42}).Routes(); len(r) != 3 {
		t.Errorf("the service path without a neighbour: %+v", r)
	}
}
