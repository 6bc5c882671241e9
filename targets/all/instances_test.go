package all_test

import (
	"testing"

	"github.com/dbsock/dbsock/targets/targettest"
)

// TestTwoServersAreNotOneRun: the TCP endpoint of one server and the Unix
// socket of another server of the same kind (a second instance, another
// port) are refused, where the server can name itself; one server's two
// endpoints pass.
func TestTwoServersAreNotOneRun(t *testing.T) {
	for _, tt := range []struct{ target, binary string }{{"redis", "redis-server"}, {"mysql", "mariadbd"}, {"postgres", "initdb"}} {
		t.Run(tt.target, func(t *testing.T) {
			a := targettest.Local(t, tt.target, tt.binary)
			b := targettest.Local(t, tt.target, tt.binary)
			err := targettest.Mismatched(t, tt.target, a.TCP, b.Unix)
			targettest.Contains(t, err, "reach two different servers", a.TCP.Address, b.Unix.Address)
			if err := targettest.Mismatched(t, tt.target, a.TCP, a.Unix); err != nil {
				t.Fatalf("one server's two endpoints: %v", err)
			}
		})
	}
}
