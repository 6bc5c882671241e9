package supply

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortBelowTheEphemeralRange: a server's port is chosen below the
// kernel's ephemeral range, where no client connection's local end is
// handed out, so that a server restarted between instances can bind it
// again; and it is free.
func TestFreePortBelowTheEphemeralRange(t *testing.T) {
	low, ok := ephemeralLow()
	if !ok || low <= minServerPort+1000 {
		t.Skipf("the ephemeral range's start (%d, read %v) leaves no room below it", low, ok)
	}
	for range 20 {
		port, err := FreePort4()
		if err != nil {
			t.Fatal(err)
		}
		if port < minServerPort || port >= low {
			t.Fatalf("port %d: want one in [%d, %d), below the ephemeral range", port, minServerPort, low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
	}
}
