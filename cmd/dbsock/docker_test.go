package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// offlineImages are the --image flags for dbsock's own images (make images).
var offlineImages = func() []string {
	var out []string
	for name, ref := range offlineImage {
		out = append(out, "--image", name+"="+ref)
	}
	return out
}()

// offlineImage is the offline image of each container target.
var offlineImage = func() map[string]string {
	out := map[string]string{}
	for _, t := range targets.Containers() {
		out[t.Name] = t.Container.Offline
	}
	return out
}()

// needImages skips (or, under DBSOCK_REQUIRE_SERVERS, fails) unless the
// Docker engine answers and dbsock's offline images are built.
func needImages(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Docker and images; skipped with -short")
	}
	for _, ref := range offlineImage {
		if err := exec.Command("docker", "image", "inspect", ref).Run(); err != nil {
			msg := "Docker image " + ref + " is not here (run make images)"
			if os.Getenv(testutil.RequireEnv) != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// dbsockContainers lists the containers labelled by the dbsock of pid
// (tests of other packages may run containers at the same time).
func dbsockContainers(t *testing.T, pid int) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+supply.Label+"=1",
		"--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

// checkContainerRun checks a docker or compose provider run: every target
// verified on both transports in every round, host network, image and
// socket dir recorded, and nothing left behind.
func checkContainerRun(t *testing.T, provider string) {
	needImages(t)
	before := len(dbsockContainers(t, os.Getpid()))
	tmp := shortTempDir(t)
	t.Setenv("TMPDIR", tmp)
	r := runJSON(t, append([]string{"run", "all", "postgres", "--provider", provider, "--n", "300", "--warmup", "20", "--instances", "1", "--rounds", "2"}, offlineImages...)...)
	products := map[string]string{"mysql": "MariaDB", "redis": "Redis", "mongo": "FerretDB", "postgres": "PostgreSQL"}
	for _, target := range r.Targets {
		if target.Error != "" {
			t.Errorf("%s: %s", target.Name, target.Error)
		}
		if target.Server.Product != products[target.Name] || target.NetworkMode != "host" || target.Image != offlineImage[target.Name] ||
			!strings.HasPrefix(target.ImageID, "sha256:") || !strings.HasPrefix(target.SocketDir, tmp+"/dbsock-") {
			t.Errorf("%s: product %q network %q image %q id %q socket dir %q", target.Name, target.Server.Product, target.NetworkMode, target.Image, target.ImageID, target.SocketDir)
		}
		if !strings.Contains(target.CPUGroup, "the server ran in CPU cgroup /") {
			t.Errorf("%s: the report does not say the container ran in a CPU cgroup of its own: %q", target.Name, target.CPUGroup)
		}
	}
	if len(r.Runs) != 4*2*2 {
		t.Fatalf("%d runs, want 4 targets x 2 transports x 2 rounds", len(r.Runs))
	}
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Errors != 0 || run.N != 300 || run.Latency.P50 <= 0 {
			t.Errorf("%s %s round %d: verified %v errors %d n %d", run.Target, run.Transport, run.Round, run.TransportVerified, run.Errors, run.N)
		}
	}
	if n := len(dbsockContainers(t, os.Getpid())); n != before {
		t.Errorf("%d dbsock containers after the run, %d before", n, before)
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Errorf("temp dirs left: %v", left)
	}
}

func TestDockerProviderAllTargets(t *testing.T)  { checkContainerRun(t, "docker") }
func TestComposeProviderAllTargets(t *testing.T) { checkContainerRun(t, "compose") }

// TestDockerProviderSIGINT interrupts a docker-provider run while it
// measures, with one container per server and with the second one of
// the paths off the host network and the service path's idle container
// on the run's network: no container, no network and no temp dir may
// remain.
func TestDockerProviderSIGINT(t *testing.T) {
	needImages(t)
	t.Run("host network", func(t *testing.T) { sigintDocker(t, 1) })
	t.Run("published, bridge, service and pod", func(t *testing.T) {
		sigintDocker(t, 3, "--paths", "tcp,published,bridge,service,pod,unix")
	})
}

func sigintDocker(t *testing.T, containers int, args ...string) {
	bin := buildDbsock(t)
	tmp := shortTempDir(t)
	out := filepath.Join(t.TempDir(), "partial.json")
	args = append(append([]string{"run", "redis", "--provider", "docker", "--n", "100000000", "--instances", "1", "--rounds", "1", "--out", out}, args...), offlineImages...)
	cmd, sc := startDbsock(t, bin, tmp, args...)
	waitForLine(sc, "rows seeded, measuring")
	if n := len(dbsockContainers(t, cmd.Process.Pid)); n != containers {
		t.Fatalf("%d dbsock containers while measuring, want %d", n, containers)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("dbsock did not stop within 30 s of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitFailed {
		t.Fatalf("exit %d, want %d", code, ExitFailed)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) == 0 || !rep.Runs[0].Incomplete {
		t.Fatalf("want the interrupted run kept and marked incomplete: %+v", rep.Runs)
	}
	if n := len(dbsockContainers(t, cmd.Process.Pid)); n != 0 {
		t.Errorf("%d dbsock containers after SIGINT", n)
	}
	if nets, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "label="+supply.Label+"=1",
		"--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(cmd.Process.Pid)).Output(); strings.TrimSpace(string(nets)) != "" {
		t.Errorf("dbsock networks left: %s", nets)
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Errorf("temp dirs left: %v", left)
	}
}

// TestContainerInstances restarts containers between server instances,
// with the docker provider (the container stopped and started again, the
// Redis config file put back while it starts) and with compose (compose
// restart): every instance answers on both verified transports, twice
// over. The interval over instances (6 or more) is pipeline's
// TestInstancesRestartTheServerAndGiveTheInterval.
func TestContainerInstances(t *testing.T) {
	for _, provider := range []string{"docker", "compose"} {
		t.Run(provider, func(t *testing.T) {
			needImages(t)
			t.Setenv("TMPDIR", shortTempDir(t))
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "mysql", "redis", "--provider", provider, "--instances", "3", "--n", "100", "--warmup", "10", "--blocks", "6",
				"--format", "json", "--out", out}, offlineImages...)
			code, _, stderr := dbsock(t, args...)
			if code != 0 {
				t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
			}
			r, err := readReport(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{"mysql", "redis"} {
				if !strings.Contains(stderr, target+": server instance 3 of 3 ready") {
					t.Errorf("%s: no third instance in the log:\n%s", target, stderr)
				}
			}
			byInstance := map[string]int{}
			for _, run := range r.Runs {
				byInstance[run.Target+"/"+strconv.Itoa(run.Instance)]++
				if !run.TransportVerified || run.Errors != 0 || run.N != 100 {
					t.Errorf("%s instance %d %s: verified %v errors %d n %d %s", run.Target, run.Instance, run.Transport, run.TransportVerified, run.Errors, run.N, run.Error)
				}
			}
			if len(byInstance) != 6 {
				t.Errorf("runs by target and instance: %v, want both transports of instances 1 to 3 of each", byInstance)
			}
			for k, n := range byInstance {
				if n != 2 {
					t.Errorf("%s: %d runs, want TCP and Unix", k, n)
				}
			}
		})
	}
}

// TestComposeRedisIsTheContainersFirstProcess: compose's Redis gets its
// password on a here-document and is exec'd, so redis-server itself is the
// container's first process and a stop's SIGTERM reaches it (behind a
// pipe, sh stayed first, ignored SIGTERM, and every restart waited out
// compose's 10 s stop timeout).
func TestComposeRedisIsTheContainersFirstProcess(t *testing.T) {
	needImages(t)
	t.Setenv("TMPDIR", shortTempDir(t))
	c := compose.NewCompose(targets.Containers())
	c.Images = offlineImage
	defer c.Close()
	tgt, _ := targets.Lookup("redis")
	srv, err := c.Supply(context.Background(), tgt.Supply())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	tree, ok := srv.CPU.(*cpustat.Tree)
	if !ok {
		t.Fatalf("the compose service's CPU meter is %T (%s), want its process tree", srv.CPU, srv.CPUWhyNot)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(tree.Root) + "/comm")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(comm)); got != "redis-server" {
		t.Errorf("the redis container's first process is %q, want redis-server", got)
	}
}

// TestContainerPaths measures the ways applications reach a server
// container off the host network: a port Docker publishes on 127.0.0.1
// and the container's address on the run's bridge network (from the
// host), that address from another container on the network (service)
// and 127.0.0.1 inside the server container's own namespace (pod), beside
// host networking and the shared socket, each verified by the peer the
// server sees, over two server instances (a restarted container has a new
// namespace), from the docker and the compose provider, with the client
// on the host; the report names what serves the published port. Each
// target's evidence on every path is checked once (docker); the routes of
// the other provider, the same for every target, with Redis. (The client
// container measures through dbsock's own agent, which dials tcp, tcp6,
// tls and unix: TestClientContainerPathsRefused.) Nothing is left after the
// runs, nor after kill -9 (of dbsock and its reaper) and dbsock clean.
func TestContainerPaths(t *testing.T) {
	needImages(t)
	tmp := shortTempDir(t)
	t.Setenv("TMPDIR", tmp)
	for _, c := range []struct {
		provider, client string
		targets          []string
	}{
		{"docker", "host", []string{"redis", "postgres", "mysql"}},
		{"compose", "host", []string{"redis"}},
	} {
		provider, client := c.provider, c.client
		t.Run(provider+"/client="+client, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append(append([]string{"run"}, c.targets...), "--provider", provider, "--client", client,
				"--paths", "tcp,published,bridge,service,pod,unix", "--n", "200", "--warmup", "20", "--instances", "2", "--rounds", "1", "--out", out, "-q")
			code, _, stderr := dbsock(t, append(args, offlineImages...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rep, err := readReport(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Targets) != len(c.targets) {
				t.Fatalf("%d targets in the report, want %d", len(rep.Targets), len(c.targets))
			}
			checkRoutes(t, rep, 12)
			checkNoDocker(t, tmp, os.Getpid())
		})
	}

	bin := buildDbsock(t)
	for _, provider := range []string{"docker", "compose"} {
		cmd, sc := startDbsock(t, bin, tmp, append([]string{"run", "redis", "--provider", provider, "--paths", "tcp,published,bridge,service,pod,unix", "--n", "100000000", "--instances", "1", "--rounds", "1"}, offlineImages...)...)
		waitForLine(sc, "dbsock: redis: Redis") // ready: both servers and the idle container are up
		time.Sleep(300 * time.Millisecond)
		killReapers(cmd.Process.Pid) // dbsock clean is for a run killed with its reaper
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if code, stdout, stderr := dbsock(t, "clean"); code != 0 || !strings.Contains(stdout, "removed network") {
			t.Fatalf("%s: clean: exit %d, %s%s", provider, code, stdout, stderr)
		}
		checkNoDocker(t, tmp, cmd.Process.Pid)
	}
}

// checkRoutes checks each run of a report of the container paths: every
// path verified, without errors, by the peer its route gives (a bridge
// address; on the service path the idle container's, not the gateway's;
// on the pod path the loopback), perTarget runs of each target (one per
// path and instance), and, where the published port was measured, the
// report's word on what serves it.
func checkRoutes(t *testing.T, rep *results.Report, perTarget int) {
	t.Helper()
	seen, published := map[string]int{}, map[string]bool{}
	for _, r := range rep.Runs {
		if !r.TransportVerified || r.Errors != 0 {
			t.Errorf("%s %s: verified %v (%s), errors %d", r.Target, r.Transport, r.TransportVerified, r.Evidence, r.Errors)
		}
		bridged := strings.Contains(r.Evidence, "172.") || strings.Contains(r.Evidence, "192.168.") || strings.Contains(r.Evidence, "10.")
		switch p := r.Transport.Info(); {
		case p.Docker && !p.Netns:
			if !bridged {
				t.Errorf("%s %s: the evidence names no bridge address: %s", r.Target, r.Transport, r.Evidence)
			}
			published[r.Target] = published[r.Target] || r.Transport == drivers.Published
		case p.Netns && r.Endpoint.From != "":
			if from := r.Endpoint.From; from == "" || !strings.Contains(r.Evidence, from) || r.Endpoint.Netns == "" {
				t.Errorf("%s service: dialed from %q in %q, but the server saw %s", r.Target, from, r.Endpoint.Netns, r.Evidence)
			}
		case p.Docker:
			if !strings.Contains(r.Evidence, "127.0.0.1") || r.Endpoint.Netns == "" {
				t.Errorf("%s pod: dialed in %q, the server saw %s", r.Target, r.Endpoint.Netns, r.Evidence)
			}
		}
		seen[r.Target]++
	}
	for _, ti := range rep.Targets {
		if seen[ti.Name] != perTarget {
			t.Errorf("%s: %d runs, want one per path and instance (%d)", ti.Name, seen[ti.Name], perTarget)
		}
		if w := strings.Join(results.Texts(ti.Warnings), " "); published[ti.Name] && !strings.Contains(w, "docker-proxy (pid") && !strings.Contains(w, "NAT rules") {
			t.Errorf("%s: the report does not say what serves the published port: %q", ti.Name, w)
		}
	}
}

// checkNoDocker fails the test if a container or network of the dbsock
// of pid, or a temp dir, is left (other tests on the engine may have
// theirs running).
func checkNoDocker(t *testing.T, tmp string, pid int) {
	t.Helper()
	for _, kind := range [][]string{{"ps", "-aq"}, {"network", "ls", "-q"}} {
		out, err := exec.Command("docker", append(kind, "--filter", "label="+supply.Label+"=1",
			"--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(pid))...).Output()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("docker %s: dbsock's left: %q (%v)", kind[0], out, err)
		}
	}
	if left := testutil.TempDirs(t, tmp); len(left) != 0 {
		t.Errorf("temp dirs left: %v", left)
	}
}
