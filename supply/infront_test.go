package supply

import (
	"reflect"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestInFrontEndpoints: a hop's container reaches the server behind it at
// its TCP address and at its socket under /behind, with no account; the
// hop's own endpoints carry the server's account, each its hop's leg, a
// socket's name made a path in the hop's directory.
func TestInFrontEndpoints(t *testing.T) {
	srv := &Server{}
	account := drivers.Endpoint{User: "u", Password: "p", Database: "d"}
	srv.Set(Served(account, "127.0.0.1:6379", "/tmp/run/redis-1/redis.sock"))
	p := behindPair(srv)
	if p.TCP.Address != "127.0.0.1:6379" || p.Unix.Address != "/behind/redis.sock" || p.TCP.Password != "" || p.Unix.Password != "" {
		t.Errorf("behind: %+v", p)
	}
	eps := hopEndpoints("/tmp/run/hop-1", []drivers.Endpoint{
		{Transport: drivers.UnixHopTCP, Address: "unix-tcp.sock", Hop: drivers.TCP},
		{Transport: drivers.TCP, Address: "127.0.0.1:7000", Hop: drivers.Unix},
	}, srv.TCP())
	want := []drivers.Endpoint{
		{Transport: drivers.UnixHopTCP, Address: "/tmp/run/hop-1/unix-tcp.sock", Hop: drivers.TCP, User: "u", Password: "p", Database: "d"},
		{Transport: drivers.TCP, Address: "127.0.0.1:7000", Hop: drivers.Unix, User: "u", Password: "p", Database: "d"},
	}
	if len(eps) != len(want) {
		t.Fatalf("%d endpoints, want %d: %+v", len(eps), len(want), eps)
	}
	for i := range want {
		if !reflect.DeepEqual(eps[i], want[i]) {
			t.Errorf("endpoint %d: %+v, want %+v", i, eps[i], want[i])
		}
	}
}
