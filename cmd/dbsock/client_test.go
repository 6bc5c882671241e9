package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports"
)

var (
	staticOnce sync.Once
	staticBin  string
	staticErr  error
)

// staticDbsock builds dbsock as the client container runs it: a static
// Linux binary (this test's own executable is the test binary, which has
// no "agent" command).
func staticDbsock(t *testing.T) string {
	t.Helper()
	staticOnce.Do(func() {
		dir, err := os.MkdirTemp("/tmp", "dbsock-bin-") // not under a test's TMPDIR: every test uses it (TestMain removes it)
		if err != nil {
			staticErr = err
			return
		}
		staticBin = filepath.Join(dir, "dbsock")
		cmd := exec.Command("go", "build", "-o", staticBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			staticErr = err
			staticBin = string(out)
		}
	})
	if staticErr != nil {
		t.Fatalf("build a static dbsock: %v\n%s", staticErr, staticBin)
	}
	return staticBin
}

// TestClientContainer runs the client in a container beside the servers
// (dbsock's own agent, dbsock agent, in it), from both container
// providers: every connection is verified on the server side over its
// transport, the client's CPU is its agent's in the container and the
// server's is read as on the host, and the report names where the client
// ran. Each target's settings reaching the client are checked once
// (docker); compose, whose client container is the same, with Redis.
func TestClientContainer(t *testing.T) {
	for provider, targets := range map[string][]string{"docker": {"mysql", "redis", "postgres"}, "compose": {"redis"}} {
		t.Run(provider, func(t *testing.T) {
			needImages(t)
			t.Setenv("TMPDIR", shortTempDir(t))
			bin := staticDbsock(t)
			r := runJSON(t, append(append(append([]string{"run"}, targets...), "--provider", provider, "--client", "container", "--client-binary", bin,
				"--instances", "1", "--n", "200", "--warmup", "20", "--blocks", "4", "--redis-protocol", "2", "--mysql-mode", "interpolate"), offlineImages...)...)
			if r.Config.Client != "container" {
				t.Errorf("config.client = %q, want container", r.Config.Client)
			}
			for _, ti := range r.Targets {
				if !strings.Contains(ti.Client, "docker container") || !strings.Contains(ti.Client, "dbsock/client:") {
					t.Errorf("%s: client %q does not name its container and image", ti.Name, ti.Client)
				}
				if !strings.Contains(ti.CPUGroup, "the client in /docker/") {
					t.Errorf("%s: cpu_cgroup %q does not name the client container's cgroup", ti.Name, ti.CPUGroup)
				}
			}
			seen := map[string]bool{}
			for _, run := range r.Runs {
				seen[run.Target+"/"+string(run.Transport)] = true
				if !run.TransportVerified || run.Evidence == "" || run.Errors != 0 || run.N != 200 {
					t.Errorf("%s %s instance %d: verified %v (%q), errors %d, n %d %s", run.Target, run.Transport, run.Instance, run.TransportVerified, run.Evidence, run.Errors, run.N, run.Error)
				}
				if run.CPU == nil || run.CPU.ServerNs == nil || *run.CPU.ServerNs <= 0 || run.CPU.ClientNs <= 0 {
					t.Errorf("%s %s: CPU %+v, want both sides read from the client container", run.Target, run.Transport, run.CPU)
				}
				// The target's settings reached the client container's
				// driver, which names its mode in each run.
				if want := map[string]string{"mysql": "interpolate", "redis": "resp2", "postgres": "prepared"}[run.Target]; run.Mode != want {
					t.Errorf("%s %s: mode %q, want %q (the flags' settings, as the client read them)", run.Target, run.Transport, run.Mode, want)
				}
			}
			for _, target := range targets {
				for _, tr := range drivers.Transports {
					if !seen[target+"/"+string(tr)] {
						t.Errorf("no %s run over %s", target, tr)
					}
				}
			}
			var b strings.Builder
			if err := reports.Markdown(&b, r); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"- Client: dbsock's client (its own Go agent, which did and timed the ops) ran in docker container", "dbsock's own agent's process tree in the client container", "from one Go client in a container of its own", "client=container"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("the Markdown report does not say %q", want)
				}
			}
		})
	}
}

// TestClientContainerTLS: the tls path runs in the client container too:
// the agent's open carries the run's CA certificate (never a key), and
// every path is verified on the server side, the TLS one as the server
// shows it.
// (compose.yaml's services have no certificate: --provider compose
// refuses the tls path.)
func TestClientContainerTLS(t *testing.T) {
	for _, provider := range []string{"docker"} {
		t.Run(provider, func(t *testing.T) {
			needImages(t)
			t.Setenv("TMPDIR", shortTempDir(t))
			bin := staticDbsock(t)
			r := runJSON(t, append([]string{"run", "redis", "--provider", provider, "--client", "container", "--client-binary", bin,
				"--paths", "tcp,tls,unix", "--n", "100", "--warmup", "10", "--blocks", "2", "--rounds", "1", "--instances", "1"}, offlineImages...)...)
			seen := map[drivers.Transport]bool{}
			for _, run := range r.Runs {
				seen[run.Transport] = true
				if !run.TransportVerified || run.Evidence == "" || run.Errors != 0 || run.N != 100 {
					t.Errorf("%s: verified %v (%q), errors %d, n %d %s", run.Transport, run.TransportVerified, run.Evidence, run.Errors, run.N, run.Error)
				}
			}
			for _, tr := range []drivers.Transport{drivers.TCP, drivers.TLS, drivers.Unix} {
				if !seen[tr] {
					t.Errorf("no run over %s", tr)
				}
			}
		})
	}
}

// TestClientContainerAtLoad: at load (4 connections a path, paced at
// 1000/s) dbsock's agent in the client container runs a goroutine per
// connection, each verified, paced from one T0, and the report has the
// generator's figures of every side and the agent's CPU time.
func TestClientContainerAtLoad(t *testing.T) {
	needImages(t)
	t.Setenv("TMPDIR", shortTempDir(t))
	bin := staticDbsock(t)
	r := runJSON(t, append([]string{"run", "redis", "postgres", "--provider", "docker", "--client", "container", "--client-binary", bin,
		"--paths", "tcp,unix", "--concurrency", "4", "--rate", "1000", "--n", "400", "--blocks", "2", "--instances", "1", "--warmup", "10"}, offlineImages...)...)
	if len(r.Runs) != 4 {
		t.Errorf("%d runs; want redis and postgres over tcp and unix", len(r.Runs))
	}
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Errors != 0 || run.N != 400 || run.Concurrency != 4 {
			t.Errorf("%s %s: verified %v (%q), errors %d, n %d, concurrency %d %s", run.Target, run.Transport, run.TransportVerified, run.Evidence, run.Errors, run.N, run.Concurrency, run.Error)
		}
		if run.Client == nil || run.Client.Workers != "goroutines" || run.Client.Language != "go" {
			t.Errorf("%s %s: client %+v; want Go's, a goroutine per connection", run.Target, run.Transport, run.Client)
		}
		if g := run.Generator; g == nil || g.OfferedRate != 1000 || g.AchievedRate <= 0 {
			t.Errorf("%s %s: generator %+v; want the offered 1000/s and what was reached", run.Target, run.Transport, g)
		}
		if run.CPU == nil || run.CPU.ClientNs <= 0 {
			t.Errorf("%s %s: CPU %+v; want the agent's in the container", run.Target, run.Transport, run.CPU)
		}
	}
}

// TestClientContainerRefusals: what dbsock's agent in the client
// container cannot do is refused before anything starts, exit 2 and one
// line: a path it does not dial itself (service and pod are dialed from
// inside another container's network namespace), several value sizes.
func TestClientContainerRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--paths", "tcp,service,unix"}, "not path service"},
		{[]string{"--paths", "tcp,pod,unix"}, "not path pod"},
		{[]string{"--value-size", "10,100"}, "one value size a run"},
	} {
		code, _, stderr := dbsock(t, append([]string{"run", "redis", "--provider", "docker", "--client", "container"}, tc.args...)...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "the client container measures through dbsock's own agent") ||
			!strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and one line saying %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}
