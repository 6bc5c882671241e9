package compose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	_ "github.com/dbsock/dbsock/supply/containers" // the container runtime
	"github.com/dbsock/dbsock/targets"
)

// probeImage is the image of the container dbsock did not start: any of
// dbsock's offline images has bash (its /dev/tcp) and timeout.
const probeImage = "dbsock/redis:7.0"

// TestServersUnreachableFromOtherContainers starts servers with the docker
// provider (every path it serves: host networking, tls, and the second
// container of the published and bridge paths on the run's network), with
// host networking and without it (an engine that says it is rootless, as
// Docker Desktop and rootless Docker have none that is this host's), and
// with the compose provider (its second project's pods, and the idle
// service of the service path), and checks from a container on Docker's default bridge, which dbsock did not
// start, that no server answers at any address the run uses: the default
// bridge's gateway (this host), the gateway and the containers' own
// addresses on every network the server containers are on, at every port
// they serve. The same probe reaches a listener of this test's on this
// host, and this host reaches the servers at those addresses: the probe
// can connect, and the addresses are live.
func TestServersUnreachableFromOtherContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker and images; skipped with -short")
	}
	for _, ref := range []string{"dbsock/redis:7.0", "dbsock/postgres:15"} {
		if err := exec.Command("docker", "image", "inspect", ref).Run(); err != nil {
			if os.Getenv(testutil.RequireEnv) != "" {
				t.Fatalf("Docker image %s is not here (run make images)", ref)
			}
			t.Skipf("Docker image %s is not here (run make images)", ref)
		}
	}
	t.Setenv("TMPDIR", shortDir(t))
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true") // no registry for its image; dbsock removes its own containers
	probe := startProbe(t)
	hostGW := probe.gateway(t)
	control := hostListener(t)
	if open := probe.open(t, net.JoinHostPort(hostGW, strconv.Itoa(control))); len(open) != 1 {
		t.Fatalf("the probe on the default bridge cannot reach this host's listener at %s:%d: it would prove nothing", hostGW, control)
	}
	images := map[string]string{"redis": "dbsock/redis:7.0", "postgres": "dbsock/postgres:15"}
	for _, mode := range []struct {
		name     string
		rootless bool
		provider func() supply.Provider
	}{
		{"docker/host network", false, func() supply.Provider {
			d := supply.NewDocker()
			d.Images, d.Routes, d.TLS = images, true, true
			return d
		}},
		{"docker/no host network", true, func() supply.Provider {
			d := supply.NewDocker()
			d.Images, d.Routes, d.TLS = images, true, true
			return d
		}},
		{"compose", false, func() supply.Provider {
			c := compose.NewCompose(targets.Containers())
			c.Images, c.Routes, c.Service = images, true, true
			return c
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.rootless {
				t.Setenv("DOCKER_HOST", "unix://"+rootlessEngine(t))
			}
			d := mode.provider()
			t.Cleanup(func() { d.Close() })
			var ports []int
			for _, name := range []string{"redis", "postgres"} {
				tg, _ := targets.Lookup(name)
				srv, err := d.Supply(context.Background(), tg.Supply())
				if err != nil {
					t.Fatal(err)
				}
				if got := srv.NetworkMode == "host"; got == mode.rootless {
					t.Fatalf("%s: network mode %q with the engine saying rootless %v", name, srv.NetworkMode, mode.rootless)
				}
				for _, e := range srv.ByPath {
					if _, p, err := net.SplitHostPort(e.Address); err == nil && e.Transport.Network() != "unix" {
						n, _ := strconv.Atoi(p)
						ports = append(ports, n)
					}
				}
			}
			addrs := []string{hostGW}
			for _, c := range runContainers(t) {
				for _, nw := range c.networks {
					if nw.name == "bridge" {
						t.Errorf("container %s is on Docker's default bridge", c.id)
					}
					addrs = append(addrs, nw.ip, nw.gateway)
					// This host reaches a server at its address there (the
					// service path's idle container serves nothing).
					if c.target != "service-path-client" && c.target != "app" && !reachesAny(nw.ip, ports) {
						t.Errorf("this host reaches container %s at none of %s:%v: the probe would test a dead address", c.id, nw.ip, ports)
					}
				}
			}
			var dials []string
			for _, a := range addrs {
				for _, p := range ports {
					dials = append(dials, net.JoinHostPort(a, strconv.Itoa(p)))
				}
			}
			if open := probe.open(t, dials...); len(open) != 0 {
				t.Errorf("a container dbsock did not start reaches the run's servers at %v", open)
			}
			// The run's network goes with the run.
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			nets, err := exec.Command("docker", "network", "ls", "-q", "--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(os.Getpid())).Output()
			if err != nil || len(bytes.Fields(nets)) != 0 {
				t.Errorf("the run's networks after Close: %q (%v)", nets, err)
			}
		})
	}
}

// shortDir is a temp dir for the servers' sockets (t.TempDir's paths are
// too long for a socket).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// A prober is a container on Docker's default bridge that dbsock did not
// start.
type prober struct{ id string }

func startProbe(t *testing.T) prober {
	t.Helper()
	out, err := exec.Command("docker", "run", "-d", "--rm", "--network", "bridge", "--label", "dbsock-test=isolation",
		"--entrypoint", "sleep", probeImage, "600").Output()
	if err != nil {
		t.Fatalf("start the probe container: %v", err)
	}
	p := prober{id: strings.TrimSpace(string(out))}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", p.id).Run() })
	return p
}

// open is the addresses (host:port) the probe container connects to, each
// tried for at most a second, all at once (a filtered address costs its
// whole second: one after another, the probes took most of this test).
func (p prober) open(t *testing.T, addrs ...string) []string {
	t.Helper()
	const script = `for a; do { if timeout 1 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}"' _ "$a" 2>/dev/null; then echo "$a"; fi; } & done; wait`
	out, err := exec.Command("docker", append([]string{"exec", p.id, "bash", "-c", script, "_"}, addrs...)...).Output()
	if err != nil {
		t.Fatalf("probe from container %s: %v", p.id, err)
	}
	return strings.Fields(string(out))
}

// hostListener accepts on every address of this host, for the probe's
// control.
func hostListener(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// reachesAny says whether this host connects to ip at one of ports.
func reachesAny(ip string, ports []int) bool {
	for _, p := range ports {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(p)), time.Second); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// gateway is the probe's gateway on the default bridge: this host.
func (p prober) gateway(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", "{{.NetworkSettings.Networks.bridge.Gateway}}", p.id).Output()
	if gw := strings.TrimSpace(string(out)); err == nil && net.ParseIP(gw) != nil {
		return gw
	}
	t.Fatalf("the probe container's gateway on the default bridge: %v %q", err, out)
	return ""
}

type attached struct{ name, ip, gateway string }

type runContainer struct {
	id, target string
	networks   []attached
}

// runContainers are the containers of this process's dbsock runs and the
// networks each is on.
func runContainers(t *testing.T) []runContainer {
	t.Helper()
	ids, err := exec.Command("docker", "ps", "-q", "--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(os.Getpid())).Output()
	if err != nil || len(bytes.Fields(ids)) == 0 {
		t.Fatalf("the run's containers: %v %q", err, ids)
	}
	var out []runContainer
	for _, id := range strings.Fields(string(ids)) {
		b, err := exec.Command("docker", "inspect", "-f", `{{index .Config.Labels "dbsock.target"}} {{json .NetworkSettings.Networks}}`, id).Output()
		if err != nil {
			t.Fatal(err)
		}
		target, js, _ := strings.Cut(string(b), " ")
		var nws map[string]struct{ IPAddress, Gateway string }
		if err := json.Unmarshal([]byte(js), &nws); err != nil {
			t.Fatal(err)
		}
		c := runContainer{id: id, target: target}
		for name, nw := range nws {
			if nw.IPAddress != "" {
				c.networks = append(c.networks, attached{name, nw.IPAddress, nw.Gateway})
			}
		}
		out = append(out, c)
	}
	return out
}

// rootlessEngine is a socket that passes every request to this host's
// engine and answers /info as a rootless engine would: the docker
// provider then has no host network.
func rootlessEngine(t *testing.T) string {
	t.Helper()
	real := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		real = strings.TrimPrefix(h, "unix://")
	}
	sock := filepath.Join(shortDir(t), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", real)
		}},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if !strings.HasSuffix(resp.Request.URL.Path, "/info") || resp.StatusCode != http.StatusOK {
				return nil
			}
			b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if err != nil {
				return err
			}
			var info map[string]any
			if err := json.Unmarshal(b, &info); err != nil {
				return err
			}
			opts, _ := info["SecurityOptions"].([]any)
			info["SecurityOptions"] = append(opts, "name=rootless")
			b, _ = json.Marshal(info)
			resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
			return nil
		},
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sock
}
