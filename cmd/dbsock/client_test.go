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
// no "measure" command).
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

// TestClientContainer runs the client in a container beside the servers,
// from both container providers: every connection is verified on the
// server side over its transport, the server's CPU is read from the
// container (it sees the host's processes), and the report names where
// the client ran. Each target's settings reaching the client are checked
// once (docker); compose, whose client container is the same, with
// Redis. A server restarted with the client in a container (a case file
// per instance) is TestContainerPaths'.
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
			for _, want := range []string{"- Client: dbsock's client (the timing loop) ran in docker container", "from one Go client in a container of its own", "client=container"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("the Markdown report does not say %q", want)
				}
			}
		})
	}
}

// TestClientContainerTLS: the tls path runs in the client container too:
// the case carries the run's CA certificate (never a key), and every path
// is verified on the server side, the TLS one with its handshake.
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
				if run.Transport == drivers.TLS && (run.Negotiated == nil || run.Negotiated.TLSVersion == "") {
					t.Errorf("tls: no TLS handshake recorded (%+v)", run.Negotiated)
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
