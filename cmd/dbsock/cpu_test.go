package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/results"
)

// procCPUTicks reads utime+stime of pid from /proc/PID/stat, in clock ticks
// (the kernel's own process accounting, not the per-thread schedstat
// dbsock reads).
func procCPUTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// TestServerCPUAgreesWithProc starts a Redis server itself, measures it as
// an external server with --server-pid, and checks dbsock's server CPU per
// op against the kernel's process accounting read before and after.
func TestServerCPUAgreesWithProc(t *testing.T) {
	addr, sock, pid := startRedis(t)
	out := filepath.Join(t.TempDir(), "r.json")
	before := procCPUTicks(t, pid)
	code, _, errs := dbsock(t, "run", "redis", "--provider", "external", "--redis-addr", addr, "--redis-socket", sock,
		"--server-pid", "redis="+strconv.Itoa(pid), "--n", "20000", "--warmup", "0", "--instances", "1", "--rounds", "1", "-q", "--out", out)
	after := procCPUTicks(t, pid)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	var ops, serverNs int64
	for _, run := range rep.Runs {
		c := run.CPU
		if c == nil || c.ServerNs == nil || !strings.Contains(c.ServerMeasuredBy, "the pid given for the server") {
			t.Fatalf("run %s has no server CPU: %+v", run.Transport, c)
		}
		ops += c.Ops
		serverNs += *c.ServerNs
	}
	if ops < 40000 {
		t.Fatalf("%d ops, want at least 40000", ops)
	}
	// The kernel's figure also holds connecting, verifying and seeding,
	// outside dbsock's timed windows: a few percent at most.
	const tickNs = 1e9 / 100 // USER_HZ
	theirs := float64(after-before) * tickNs / float64(ops)
	mine := float64(serverNs) / float64(ops)
	if theirs <= 0 || mine < 0.85*theirs || mine > 1.15*theirs {
		t.Fatalf("server CPU per op: dbsock %.0f ns, /proc %.0f ns (%d ticks over %d ops); want within 15%%", mine, theirs, after-before, ops)
	}
	t.Logf("server CPU per op: dbsock %.0f ns, /proc/PID/stat %.0f ns", mine, theirs)
	var sum results.Summary = rep.Summary[0]
	if sum.Against(drivers.Unix).CPUSaving == nil || sum.Side(drivers.TCP).CPU == nil || sum.Side(drivers.Unix).CPU == nil {
		t.Fatalf("summary lacks CPU: %+v", sum)
	}
	if cpus := rep.Targets[0].ServerCPUs; !strings.Contains(cpus, "the server's own affinity") {
		t.Errorf("server CPUs %q: want the external server's own affinity, said as such", cpus)
	}
	// A pid that is not the server's is refused before anything runs.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	code, _, errs = dbsock(t, "run", "redis", "--provider", "external", "--redis-addr", addr, "--redis-socket", sock,
		"--server-pid", "redis="+strconv.Itoa(other.Process.Pid), "--n", "10", "-q")
	if code != ExitUsage || !strings.Contains(errs, "neither it nor a process below it listens on "+addr) || !strings.Contains(errs, fmt.Sprintf("(process %d does)", pid)) {
		t.Errorf("--server-pid of another process: exit %d, %q", code, errs)
	}
	// Redis's own count of GETs in the timed blocks is exactly the ops.
	for _, side := range []results.Side{sum.Side(drivers.TCP), sum.Side(drivers.Unix)} {
		if e := side.ServerExec; e == nil || e.Calls != side.N-side.Errors || e.NsPerCall <= 0 || e.NsPerCall > mine {
			t.Fatalf("server's own execution figure %+v for %d ops (server CPU %.0f ns per op)", e, side.N, mine)
		}
	}
}

// TestPipelineDepths: redis and postgres at depths 1 and 16, both
// transports; a lookup in a batch of 16 costs less than one alone.
func TestPipelineDepths(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	out := filepath.Join(t.TempDir(), "p.json")
	code, _, errs := dbsock(t, "run", "redis", "postgres", "--pipeline", "1,16", "--provider", "local", "--n", "2000", "--warmup", "100",
		"--instances", "1", "--rounds", "1", "--blocks", "6", "-q", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	perLookup := map[string]map[int]float64{}
	for _, s := range rep.Summary {
		for _, side := range []results.Side{s.Side(drivers.TCP), s.Side(drivers.Unix)} {
			if side.N == 0 || side.Latency.P50 <= 0 {
				t.Fatalf("%s depth %d: empty side", s.Target, s.Lookups())
			}
		}
		if perLookup[s.Target] == nil {
			perLookup[s.Target] = map[int]float64{}
		}
		perLookup[s.Target][s.Lookups()] = float64(s.Side(drivers.Unix).Latency.P50) / float64(s.Lookups())
	}
	for _, target := range []string{"redis", "postgres"} {
		got := perLookup[target]
		if len(got) != 2 || got[16] <= 0 || got[16] >= got[1] {
			t.Fatalf("%s per-lookup Unix p50 by depth: %v; want both depths, 16 cheaper than 1", target, got)
		}
	}
}

// TestPrecisionEndsACase: --precision adds rounds until the interval is
// narrow enough, or --max-duration passes; the report says which.
func TestPrecisionEndsACase(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--precision", "50%"}, "precision"},
		{[]string{"--precision", "0.1%", "--max-duration", "1s"}, "max-duration"},
	} {
		out := filepath.Join(t.TempDir(), "p.json")
		args := append([]string{"run", "echo", "--provider", "local", "--n", "600", "--warmup", "50", "--instances", "1", "--rounds", "1", "--blocks", "6", "-q", "--out", out}, tt.flags...)
		if code, _, errs := dbsock(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.flags, code, errs)
		}
		rep, err := readReport(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Summary[0].EndedBy; got != tt.want {
			t.Fatalf("%v: ended by %q, want %q", tt.flags, got, tt.want)
		}
	}
}

// startRedis starts a redis-server of the test's own on a free port and a
// socket, as a server the user runs; it is killed when the test ends.
func startRedis(t *testing.T) (addr, sock string, pid int) {
	t.Helper()
	testutil.NeedAny(t, "redis-server")
	dir := shortTempDir(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	sock = filepath.Join(dir, "r.sock")
	srv := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--hz", "1")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, sock, srv.Process.Pid
}

// TestExplainWithAServerYouRun: --explain with --provider external runs
// its layers (dbsock's own floor and echo servers) locally, and the
// decomposition is there.
func TestExplainWithAServerYouRun(t *testing.T) {
	addr, sock, _ := startRedis(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, errs := dbsock(t, "run", "redis", "--explain", "--provider", "external", "--redis-addr", addr, "--redis-socket", sock,
		"--n", "2000", "--instances", "1", "--rounds", "1", "-q", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]string{}
	for _, ti := range rep.Targets {
		providers[ti.Name] = ti.Provider
	}
	if providers["redis"] != "external" || providers["floor"] != "local" || providers["echo"] != "local" {
		t.Fatalf("providers %v: want redis external, its layers local", providers)
	}
}
