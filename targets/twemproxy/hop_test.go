package twemproxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all"
	"github.com/dbsock/dbsock/targets/redis"
	"github.com/dbsock/dbsock/targets/targettest"
	"github.com/dbsock/dbsock/targets/twemproxy"
)

// measureHops runs tg over the routes --via asks for: tcp and unix, whose
// leg to Redis is its socket, are not served, and the report says why.
func measureHops(t *testing.T, tg *targets.Target) (*results.Report, error) {
	t.Helper()
	testutil.NeedAny(t, "nutcracker")
	testutil.NeedAny(t, "redis-server")
	return pipelinetest.MeasureHops(t, tg, "local")
}

// TestTwoSidesThroughTwemproxy: the two routes of the client's leg in
// front of Redis, each connection's legs checked from nutcracker's stats
// (the pool its path names counted its GETs) and from Redis's list of
// its clients; the two routes with the leg to Redis on its socket are not
// measured, and the report says why.
func TestTwoSidesThroughTwemproxy(t *testing.T) {
	rep, err := measureHops(t, targettest.Lookup(t, twemproxy.Name(redis.Name)))
	if err != nil {
		t.Fatal(err)
	}
	measured := map[drivers.Transport]bool{}
	for _, r := range rep.Runs {
		measured[r.Transport] = true
		if !r.TransportVerified || r.Errors != 0 || !strings.Contains(r.Evidence, "nutcracker's stats: pool "+string(r.Transport)+" counted 3 requests") ||
			!strings.Contains(r.Evidence, "; the hop's leg: Redis's CLIENT LIST: ") {
			t.Errorf("%s round %d: verified %v, errors %d, evidence %q", r.Transport, r.Round, r.TransportVerified, r.Errors, r.Evidence)
		}
	}
	if len(measured) != 2 || !measured[drivers.TCPHopTCP] || !measured[drivers.UnixHopTCP] {
		t.Errorf("measured %v, want tcp-tcp and unix-tcp", measured)
	}
	pipelinetest.ReportSays(t, rep,
		"The tcp path was not measured: twemproxy (nutcracker) reaches its servers over 127.0.0.1 TCP only",
		"The unix path was not measured: twemproxy (nutcracker) reaches its servers over 127.0.0.1 TCP only",
		"| "+twemproxy.Name(redis.Name)+" | ",
	)
}

// TestALyingTwemproxyFailsItsCase: a nutcracker whose pool tcp-tcp
// listens where unix-tcp names, and the other way round, fails the case,
// with nutcracker's own counts.
func TestALyingTwemproxyFailsItsCase(t *testing.T) {
	tg := *targettest.Lookup(t, twemproxy.Name(redis.Name))
	tg.Recipe = twemproxy.LyingRecipe(redis.Name)
	rep, err := measureHops(t, &tg)
	got := pipelinetest.Failures(rep, err)
	if !strings.Contains(got, "nutcracker's pool tcp-tcp counted 0 requests, not the 3 of this connection's 3 GETs: the connection on the tcp-tcp path did not reach the pool its path names (stats of pool tcp-tcp before: client_connections ") {
		t.Fatalf("a lying nutcracker's leg was not refused with its evidence: %v", got)
	}
}

// TestTwemproxyWantsTheRunsPassword: nutcracker answers no command
// without the run's password, and refuses a wrong one, on both pools.
func TestTwemproxyWantsTheRunsPassword(t *testing.T) {
	testutil.NeedAny(t, "nutcracker")
	testutil.NeedAny(t, "redis-server")
	srv := targettest.Local(t, twemproxy.Name(redis.Name), "nutcracker")
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		if ep.Password == "" {
			t.Fatalf("%s: no password", ep)
		}
		for _, first := range [][]string{{"GET", redis.Key}, {"AUTH", "not-the-password"}} {
			if line := ask(t, ep, first...); !strings.HasPrefix(line, "-") {
				t.Errorf("%s: %q without the run's password was answered %q", ep.Transport, first, line)
			}
		}
		if line := ask(t, ep, "AUTH", ep.Password); line != "+OK\r\n" {
			t.Errorf("%s: the run's password was answered %q", ep.Transport, line)
		}
	}
}

// ask sends one command (RESP: nutcracker takes no inline command) on a
// connection of its own to ep and returns the first line of the answer.
func ask(t *testing.T, ep drivers.Endpoint, args ...string) string {
	t.Helper()
	c, err := net.DialTimeout(ep.Transport.Network(), ep.Address, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	cmd := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		cmd += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %s: %v", ep, args[0], err)
	}
	return line
}

// TestAnAgentsConnectionIsFoundInItsPool: an agent's connection, which
// carries no name through nutcracker, is found as the new client
// connection of the pool its path names; where nutcracker's pools listen
// where the other's path names, the finder refuses it with nutcracker's
// counts.
func TestAnAgentsConnectionIsFoundInItsPool(t *testing.T) {
	testutil.NeedAny(t, "nutcracker")
	testutil.NeedAny(t, "redis-server")
	for _, lying := range []bool{false, true} {
		t.Run(map[bool]string{false: "true", true: "lying"}[lying], func(t *testing.T) {
			tg := *targettest.Lookup(t, twemproxy.Name(redis.Name))
			if lying {
				tg.Recipe = twemproxy.LyingRecipe(redis.Name)
			}
			srv := targettest.SuppliedAs(t, tg.Supply(), "local")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ep := srv.TCP() // tcp-tcp
			f, err := tg.Settings().Driver(drivers.Workload{}).(drivers.ConnFinder).OpenFinder(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, ok := f.(drivers.Anonymous); !ok {
				t.Fatal("the finder is not anonymous: an agent would name its connection, which nutcracker refuses")
			}
			if err := f.Expect(ctx, ""); err != nil {
				t.Fatal(err)
			}
			c, err := net.DialTimeout("tcp", ep.Address, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			v, err := f.Find(ctx, drivers.Claim{LocalAddr: c.LocalAddr().String()})
			switch {
			case !lying && (err != nil || v.Transport != drivers.TCP || !strings.Contains(v.Evidence, "nutcracker's stats: pool tcp-tcp holds a new client connection (client_connections 1,")):
				t.Errorf("the agent's connection: %+v, %v", v, err)
			case lying && (err == nil || !strings.Contains(err.Error(), "nutcracker's pool tcp-tcp holds 0 client connections, not the 1 it held before the agent opened its own plus that one")):
				t.Errorf("a lying nutcracker's pool was not refused with its counts: %+v, %v", v, err)
			}
		})
	}
}
