package haproxy_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all"
	"github.com/dbsock/dbsock/targets/haproxy"
	"github.com/dbsock/dbsock/targets/mysql"
	"github.com/dbsock/dbsock/targets/redis"
	"github.com/dbsock/dbsock/targets/targettest"
)

// servers are the servers HAProxy stands in front of in these tests, and
// their binaries.
var servers = map[string][]string{redis.Name: {"redis-server"}, mysql.Name: {"mariadbd", "mysqld"}}

func measureHops(t *testing.T, tg *targets.Target, provider string) (*results.Report, error) {
	t.Helper()
	return pipelinetest.MeasureHops(t, tg, provider)
}

// TestFourSidesThroughHAProxy: the four routes of two legs in front of
// Redis and of MariaDB, each connection's legs checked from HAProxy's
// sessions and from the server's view, and the report says which leg
// each comparison moved.
func TestFourSidesThroughHAProxy(t *testing.T) {
	testutil.NeedAny(t, "haproxy")
	for target, bins := range servers {
		t.Run(target, func(t *testing.T) {
			testutil.NeedAny(t, bins...)
			rep, err := measureHops(t, targettest.Lookup(t, haproxy.Name(target)), "local")
			if err != nil {
				t.Fatal(err)
			}
			checkFourSides(t, rep, target)
		})
	}
}

// TestFourSidesThroughHAProxyInAContainer: the same through the docker
// provider, HAProxy (dbsock/haproxy) in a container of its own in front
// of the server's, on the host's loopback and the server's bind-mounted
// socket; and nothing of either container is left behind.
func TestFourSidesThroughHAProxyInAContainer(t *testing.T) {
	for _, target := range []string{redis.Name, mysql.Name} {
		t.Run(target, func(t *testing.T) {
			rep, err := measureHops(t, targettest.Lookup(t, haproxy.Name(target)), "docker")
			if err != nil {
				t.Fatal(err)
			}
			tg := rep.Targets[0]
			if tg.Provider != "docker" || tg.Image != haproxy.Image || !strings.Contains(tg.Origin, " in front of docker container ") {
				t.Errorf("provider %q, image %q, origin %q: want HAProxy's container in front of the server's", tg.Provider, tg.Image, tg.Origin)
			}
			checkFourSides(t, rep, target)
			left, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+supply.Label+"=1", "--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(os.Getpid())).Output()
			if err != nil || len(strings.TrimSpace(string(left))) > 0 {
				t.Errorf("containers left behind: %q (%v)", left, err)
			}
			if _, err := os.Stat(tg.SocketDir); !os.IsNotExist(err) {
				t.Errorf("HAProxy's socket directory %s is still there (%v)", tg.SocketDir, err)
			}
		})
	}
}

// checkFourSides fails the test unless every run of rep was verified
// with both legs its path names, HAProxy's CPU is given apart, and the
// report says which leg each comparison moved.
func checkFourSides(t *testing.T, rep *results.Report, target string) {
	t.Helper()
	want := map[drivers.Transport]string{
		drivers.TCP: "ctrl=tcpv4) backend=unix", drivers.Unix: "ctrl=unix_stream) backend=unix",
		drivers.TCPHopTCP: "ctrl=tcpv4) backend=tcp", drivers.UnixHopTCP: "ctrl=unix_stream) backend=tcp",
	}
	for _, r := range rep.Runs {
		if !r.TransportVerified || r.Errors != 0 || !strings.Contains(r.Evidence, "frontend="+string(r.Transport)+" ") ||
			!strings.Contains(r.Evidence, want[r.Transport]) || !strings.Contains(r.Evidence, "; the hop's leg: ") {
			t.Errorf("%s round %d: verified %v, errors %d, evidence %q; want %q", r.Transport, r.Round, r.TransportVerified, r.Errors, r.Evidence, want[r.Transport])
		}
	}
	// HAProxy's CPU is given apart, a share of the server's.
	for _, side := range rep.Summary[0].Sides {
		c := side.CPU
		if c == nil || c.HopNsPerOp == nil || c.ServerNsPerOp == nil || *c.HopNsPerOp <= 0 || *c.HopNsPerOp >= *c.ServerNsPerOp {
			t.Errorf("%s: the hop's CPU per op is not a share of the server's: %+v", side.Path, c)
		}
	}
	if moves := rep.HopMoves(&rep.Summary[0]); len(moves) != 3 {
		t.Fatalf("%d comparisons read as legs, want 3: %+v", len(moves), moves)
	}
	pipelinetest.ReportSays(t, rep,
		"| "+haproxy.Name(target)+" | the hop's leg (the client's held on TCP) | TCP, hop TCP | TCP, hop Unix | ",
		"| "+haproxy.Name(target)+" | both legs | TCP, hop TCP | Unix, hop Unix | ",
		"Of the server's CPU per op, the hop in front of it (",
	)
}

// TestALyingHAProxyFailsItsCase: a HAProxy whose backend unix reaches
// Redis over its TCP address fails the case, with HAProxy's own words, as
// a local process and in a container of its own.
func TestALyingHAProxyFailsItsCase(t *testing.T) {
	for _, provider := range []string{"local", "docker"} {
		t.Run(provider, func(t *testing.T) {
			if provider == "local" {
				testutil.NeedAny(t, "haproxy")
				testutil.NeedAny(t, servers[redis.Name]...)
			}
			tg := *targettest.Lookup(t, haproxy.Name(redis.Name))
			tg.Recipe = haproxy.LyingRecipe(redis.Name)
			rep, err := measureHops(t, &tg, provider)
			got := pipelinetest.Failures(rep, err)
			if !strings.Contains(got, "HAProxy reaches Redis over TCP, not Unix as the tcp path names (show sess: backend unix, server server addr=127.0.0.1:") {
				t.Fatalf("a lying HAProxy's leg was not refused with its evidence: %v", got)
			}
		})
	}
}
