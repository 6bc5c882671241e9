package all_test

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/targets/targettest"
)

// TestTwoServersAreNotOneRun: the TCP endpoint of one server and the Unix
// socket of another server of the same kind (a second instance, another
// port) are refused, where the server can name itself; one server's two
// endpoints pass.
func TestTwoServersAreNotOneRun(t *testing.T) {
	for _, tt := range []struct{ target, binary string }{{"redis", "redis-server"}, {"mysql", "mariadbd"}, {"postgres", "initdb"}} {
		t.Run(tt.target, func(t *testing.T) {
			testutil.NeedAny(t, tt.binary)
			a := sharedLocal(t, tt.target)
			b := targettest.Local(t, tt.target, tt.binary) // a second instance of its own
			err := pipelinetest.Mismatched(t, tt.target, a.TCP(), b.Unix())
			targettest.Contains(t, err, "reach two different servers", a.TCP().Address, b.Unix().Address)
			if err := pipelinetest.Mismatched(t, tt.target, a.TCP(), a.Unix()); err != nil {
				t.Fatalf("one server's two endpoints: %v", err)
			}
		})
	}
}

// TestAnotherKindOfServer: a target pointed at a real server of another
// kind says what really answers there, in the first error.
func TestAnotherKindOfServer(t *testing.T) {
	my := sharedLocal(t, "mysql")
	rd := sharedLocal(t, "redis")
	pgAtMySQL := my.TCP()
	pgAtMySQL.User = "postgres"
	err := pipelinetest.Mismatched(t, "postgres", pgAtMySQL, drivers.Endpoint{Transport: drivers.Unix, Address: "/tmp/none/.s.PGSQL.5432"})
	targettest.Contains(t, err, "received a message that is not PostgreSQL's protocol", "what answers at "+my.TCP().Address+": a MySQL-protocol server (")
	if strings.Contains(err.Error(), "%!w") {
		t.Errorf("a formatting slip reaches the user: %v", err)
	}
	err = pipelinetest.Mismatched(t, "redis", drivers.Endpoint{Transport: drivers.TCP, Address: my.TCP().Address}, rd.Unix())
	targettest.Contains(t, err, "a MySQL-protocol server (")
	err = pipelinetest.Mismatched(t, "mysql", drivers.Endpoint{Transport: drivers.TCP, Address: rd.TCP().Address, User: "root"}, my.Unix())
	targettest.Contains(t, err, "a Redis server (it answered PING")
}
