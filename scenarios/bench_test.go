package scenarios

import (
	"context"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/compose/child"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/drivers/echo"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/results"
)

func TestMain(m *testing.M) {
	child.MaybeRun()
	os.Exit(m.Run())
}

// minimalP50 is the reference: the smallest hand-written Go ping-pong loop
// on the same server and transport, timing each op into a slice.
func minimalP50(b *testing.B, ep drivers.Endpoint, n int) time.Duration {
	nc, err := net.Dial(string(ep.Transport), ep.Address)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	if _, _, err := echo.ReadGreeting(nc); err != nil {
		b.Fatal(err)
	}
	out, in := []byte("ping"), make([]byte, 4)
	lat := make([]time.Duration, n)
	for i := range lat {
		t0 := time.Now()
		if _, err := nc.Write(out); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(nc, in); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	slices.Sort(lat)
	return lat[n/2]
}

// dbsockP50 is the same loop through dbsock's driver, Loop and histogram.
func dbsockP50(b *testing.B, ep drivers.Endpoint, n int) time.Duration {
	conn, err := echo.New(0).Open(context.Background(), ep)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	h := results.NewHistogram()
	if s := Loop(context.Background(), conn, LoopConfig{N: n}, h, nil); s.Err != nil {
		b.Fatal(s.Err)
	}
	return time.Duration(h.ValueAtQuantile(50))
}

// BenchmarkEchoVsMinimal compares dbsock's echo p50 with a minimal
// hand-written loop against the same echo server, client and server pinned
// to CPU 0, alternating the two loops so that drift hits both. It reports
// dbsock/minimal per transport: 1.00 means dbsock adds nothing measurable.
func BenchmarkEchoVsMinimal(b *testing.B) {
	if err := placement.PinProcess([]int{0}); err != nil {
		b.Skip(err)
	}
	local := compose.NewLocal()
	local.ServerCPUs = []int{0}
	defer local.Close()
	srv, err := local.Supply(context.Background(), compose.Target{Name: child.Echo, Recipe: compose.ChildRecipe(child.Echo)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop(context.Background())
	const n = 50000
	for _, t := range drivers.Transports { // warm up both paths
		dbsockP50(b, srv.Endpoints().On(t), 5000)
		minimalP50(b, srv.Endpoints().On(t), 5000)
	}
	b.ResetTimer() // (it also clears metrics: call it before reporting any)
	for _, t := range drivers.Transports {
		ep := srv.Endpoints().On(t)
		var mine, theirs []float64
		for i := 0; i < b.N; i++ {
			theirs = append(theirs, float64(minimalP50(b, ep, n)))
			mine = append(mine, float64(dbsockP50(b, ep, n)))
		}
		slices.Sort(mine)
		slices.Sort(theirs)
		m, r := mine[len(mine)/2], theirs[len(theirs)/2]
		b.ReportMetric(m, string(t)+"-dbsock-p50-ns")
		b.ReportMetric(r, string(t)+"-minimal-p50-ns")
		b.ReportMetric(m/r, string(t)+"-ratio")
	}
}
