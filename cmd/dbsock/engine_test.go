package main

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeEngine answers the engine API's /_ping and /info on a socket of its
// own with info (JSON), refuses every other request, and records them
// all; DOCKER_HOST points at it for the test.
func fakeEngine(t *testing.T, info string) func() []string {
	t.Helper()
	sock := filepath.Join(shortTempDir(t), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/info"):
			w.Write([]byte(info))
		default:
			http.Error(w, "not in this fake", http.StatusNotImplemented)
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// TestEngineRefusalsBeforeAnythingStarts: what an engine cannot serve is
// refused with exit 2 and one line, and nothing but the engine's
// description is asked of it: compose.yaml's servers and the client
// container without host networking (a rootless engine), and Docker
// Desktop.
func TestEngineRefusalsBeforeAnythingStarts(t *testing.T) {
	const rootless = `{"ServerVersion":"27.3.1","OperatingSystem":"Debian GNU/Linux 12 (bookworm)","OSType":"linux","Architecture":"x86_64","SecurityOptions":["name=seccomp,profile=builtin","name=rootless","name=cgroupns"]}`
	const desktop = `{"ServerVersion":"27.3.1","OperatingSystem":"Docker Desktop","OSType":"linux","Architecture":"x86_64","SecurityOptions":[]}`
	for _, tt := range []struct {
		name, info string
		args       []string
		want       []string
	}{
		{"compose on rootless Docker", rootless, []string{"run", "redis", "--provider", "compose"},
			[]string{"compose provider: the engine (rootless Docker, whose host network is not this host's) gives containers no host network", "use --provider docker"}},
		{"client container on rootless Docker", rootless, []string{"run", "redis", "--provider", "docker", "--client", "container"},
			[]string{"start dbsock's client container: the engine (rootless Docker", "use --client host"}},
		{"docker on Docker Desktop", desktop, []string{"run", "redis", "--provider", "docker"},
			[]string{"docker provider: the engine is Docker Desktop, which runs containers in a VM", "Use --provider local"}},
		{"compose on Docker Desktop", desktop, []string{"run", "redis", "--provider", "compose"},
			[]string{"compose provider: the engine is Docker Desktop"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := fakeEngine(t, tt.info)
			t.Setenv("TMPDIR", shortTempDir(t))
			code, stdout, stderr := dbsock(t, tt.args...)
			if code != ExitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit %d and one line", code, stdout, stderr, ExitUsage)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			for _, a := range asked() {
				if !strings.HasSuffix(a, "/_ping") && !strings.HasSuffix(a, "/info") {
					t.Errorf("the engine was asked %s: something was about to start", a)
				}
			}
			if len(asked()) == 0 {
				t.Error("the engine was never asked what it is")
			}
		})
	}
}

// TestDoctorSaysWhatARootlessEngineAllows: doctor, facing a rootless
// engine, says what dbsock does there and what it refuses.
func TestDoctorSaysWhatARootlessEngineAllows(t *testing.T) {
	fakeEngine(t, `{"ServerVersion":"27.3.1","OperatingSystem":"Debian GNU/Linux 12 (bookworm)","OSType":"linux","SecurityOptions":["name=rootless"]}`)
	_, stdout, stderr := dbsock(t, "doctor")
	for _, want := range []string{"rootless:        yes", "host networking: not this host's (rootless Docker's is the engine's own network namespace)",
		"--provider docker puts each server on the run's own bridge network", "--provider compose and --client container are refused"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor does not say %q:\n%s%s", want, stdout, stderr)
		}
	}
}
