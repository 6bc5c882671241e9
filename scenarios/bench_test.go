package scenarios

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets/echo"
	"github.com/dbsock/dbsock/targets/floor"
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
	if _, err := placement.PinProcess([]int{0}); err != nil {
		b.Skip(err)
	}
	local := supply.NewLocal()
	local.ServerCPUs = []int{0}
	defer local.Close()
	srv, err := local.Supply(context.Background(), supply.Target{Name: "echo", Recipe: supply.ChildRecipe("echo")})
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

// minimalBlockingP50 is the kernel floor written as plainly as possible: a
// server thread and a client thread in this process, each locked to its OS
// thread, ping-ponging 4 bytes with blocking read and write system calls
// over a fresh socket of transport t; each round trip is timed into a
// slice.
func minimalBlockingP50(b *testing.B, t drivers.Transport, n int) time.Duration {
	var l net.Listener
	var err error
	if t == drivers.Unix {
		l, err = net.Listen("unix", filepath.Join(b.TempDir(), "m.sock"))
	} else {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() { // the server: blocking echo on a locked thread
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fd, err := drivers.BlockingFD(c)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := make([]byte, 4)
		for {
			if k, err := unix.Read(fd, buf); err != nil || k == 0 {
				return
			}
			if _, err := unix.Write(fd, buf); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial(l.Addr().Network(), l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	fd, err := drivers.BlockingFD(c)
	c.Close()
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out, in := []byte("ping"), make([]byte, 4)
	lat := make([]time.Duration, n)
	for i := range lat {
		t0 := time.Now()
		if _, err := unix.Write(fd, out); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 4; {
			k, err := unix.Read(fd, in[got:])
			if err != nil || k == 0 {
				b.Fatal(err)
			}
			got += k
		}
		lat[i] = time.Since(t0)
	}
	unix.Close(fd)
	<-done
	slices.Sort(lat)
	return lat[n/2]
}

// floorP50 is dbsock's floor target through its driver and Loop, on a
// locked thread as the timing loop runs it.
func floorP50(b *testing.B, ep drivers.Endpoint, n int) time.Duration {
	conn, err := floor.New().Open(context.Background(), ep)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := results.NewHistogram()
	if s := Loop(context.Background(), conn, LoopConfig{N: n}, h, nil); s.Err != nil {
		b.Fatal(s.Err)
	}
	return time.Duration(h.ValueAtQuantile(50))
}

// BenchmarkFloorVsMinimal compares the floor target's p50 with the minimal
// blocking ping-pong above, everything pinned to CPU 0, alternating the
// two; it reports floor/minimal per transport (goal: within 20%).
func BenchmarkFloorVsMinimal(b *testing.B) {
	if _, err := placement.PinProcess([]int{0}); err != nil {
		b.Skip(err)
	}
	local := supply.NewLocal()
	local.ServerCPUs = []int{0}
	defer local.Close()
	srv, err := local.Supply(context.Background(), supply.Target{Name: "floor", Recipe: supply.ChildRecipe("floor")})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop(context.Background())
	const n = 20000
	for _, t := range drivers.Transports { // warm up both paths
		floorP50(b, srv.Endpoints().On(t), 2000)
		minimalBlockingP50(b, t, 2000)
	}
	cFloor := os.Getenv("DBSOCK_FLOOR_C") // scripts/bench.sh builds scripts/floor.c
	b.ResetTimer()
	for _, t := range drivers.Transports {
		var mine, theirs, c []float64
		for i := 0; i < b.N; i++ {
			theirs = append(theirs, float64(minimalBlockingP50(b, t, n)))
			mine = append(mine, float64(floorP50(b, srv.Endpoints().On(t), n)))
			if cFloor != "" {
				c = append(c, cP50(b, cFloor, t, n))
			}
		}
		m, r := median(mine), median(theirs)
		b.ReportMetric(m, string(t)+"-floor-p50-ns")
		b.ReportMetric(r, string(t)+"-minimal-p50-ns")
		b.ReportMetric(m/r, string(t)+"-floor-ratio")
		if len(c) > 0 {
			b.ReportMetric(median(c), string(t)+"-c-p50-ns")
			b.ReportMetric(m/median(c), string(t)+"-floor-c-ratio")
		}
	}
}

// median is the middle of xs (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// cP50 runs the C floor (scripts/floor.c, built by scripts/bench.sh): the
// same ping-pong with blocking syscalls, both threads on CPU 0.
func cP50(b *testing.B, bin string, t drivers.Transport, n int) float64 {
	out, err := exec.Command(bin, string(t), strconv.Itoa(n)).Output()
	if err != nil {
		b.Fatalf("%s %s: %v", bin, t, err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("%s %s printed %q", bin, t, out)
	}
	return v
}
