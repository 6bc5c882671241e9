package all_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

// loopback2 is a path that is only an entry in the table: TCP to the
// servers' port on 127.0.0.2, a second loopback address. Linux sends a
// connection to 127.0.0.2 from 127.0.0.1, so the server sees a tcp client.
var loopback2 = drivers.PathInfo{Path: "loopback2", Label: "127.0.0.2", Title: "TCP (127.0.0.2)", Phrase: "127.0.0.2 TCP",
	Help: "127.0.0.2, a second loopback address", Network: "tcp", Host: "127.0.0.2", Seen: drivers.TCP, Check: drivers.CheckLoopback}

// TestAPathIsAnEntryOfTheTable adds loopback2 to the table for the test's
// duration, and measures it beside tcp and unix with each database
// target's local server and its server-side check: the servers listen on
// 127.0.0.2 too, and every run on it is verified by the server. FerretDB
// listens on one TCP address, and the run says so instead of measuring it.
func TestAPathIsAnEntryOfTheTable(t *testing.T) {
	saved := drivers.PathTable
	drivers.PathTable = append(slices.Clip(saved), loopback2)
	t.Cleanup(func() { drivers.PathTable = saved })
	for _, name := range []string{"redis", "postgres", "mysql", "memcached", "mongo"} {
		t.Run(name, func(t *testing.T) {
			testutil.NeedAny(t, targettest.Binaries[name]...)
			rep, err := measure(t, targettest.Lookup(t, name), loopback2.Path)
			if err != nil {
				t.Fatal(err)
			}
			ti := rep.Targets[0]
			if ti.Server.Product == "FerretDB" {
				if w := strings.Join(results.Texts(ti.Warnings), " "); !strings.Contains(w, "The loopback2 path was not measured: FerretDB listens on one TCP address") || len(rep.Runs) != 4 {
					t.Errorf("FerretDB: %d runs, warnings %q", len(rep.Runs), w)
				}
				return
			}
			seen := map[drivers.Transport]int{}
			for _, r := range rep.Runs {
				seen[r.Transport]++
				if !r.TransportVerified || r.Errors != 0 || r.N != 200 || r.Latency.P50 <= 0 {
					t.Errorf("%s round %d: verified %v (%s), errors %d, n %d", r.Transport, r.Round, r.TransportVerified, r.Evidence, r.Errors, r.N)
				}
				// Dialed at 127.0.0.2, seen by the server from 127.0.0.1.
				if r.Transport == loopback2.Path && (!strings.HasPrefix(r.Endpoint.Address, "127.0.0.2:") || !strings.Contains(r.Evidence, "127.0.0.1")) {
					t.Errorf("loopback2 dialed %q, the server saw %s", r.Endpoint.Address, r.Evidence)
				}
			}
			if seen[loopback2.Path] != 2 || seen[drivers.TCP] != 2 || seen[drivers.Unix] != 2 {
				t.Errorf("runs per path %v, want 2 each of tcp, unix and loopback2", seen)
			}
		})
	}
}

// measure runs tg's local server on tcp, unix and path, 2 rounds of 200
// ops.
func measure(t *testing.T, tg *targets.Target, path drivers.Transport) (*results.Report, error) {
	t.Helper()
	return pipelinetest.MeasurePaths(t, tg, []drivers.Transport{drivers.TCP, drivers.Unix, path}, "")
}
