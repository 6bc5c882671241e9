package agents_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all" // every target's driver and recipe
	"github.com/dbsock/dbsock/targets/mysql"
	"github.com/dbsock/dbsock/targets/postgres"
)

// rows is how many rows each test server is seeded with.
const rows = 100

// target is what a stack's test needs of one target: its server binaries
// (none for dbsock's own servers), its lookup's statement, and a key's
// form.
type target struct {
	name      string
	binaries  []string
	statement string
	noPrepare bool
	key       func(id int64) any
}

// need skips a test of tg without its server (or under -short).
func (tg target) need(t *testing.T) {
	t.Helper()
	if len(tg.binaries) > 0 {
		testutil.NeedAny(t, tg.binaries...)
	} else if testing.Short() {
		t.Skip("needs a real server; skipped with -short")
	}
}

// pingPong is the key of dbsock's own servers' op: the message's size.
func pingPong(int64) any { return int64(4) }

var stackTargets = []target{
	{name: "redis", binaries: []string{"redis-server"}, key: func(id int64) any { return drivers.KeyName(id) }},
	{name: "postgres", binaries: []string{"postgres"}, statement: postgres.Query, key: func(id int64) any { return id }},
	{name: "mysql", binaries: []string{"mariadbd", "mysqld"}, statement: mysql.Query, key: func(id int64) any { return id }},
	{name: "memcached", binaries: []string{"memcached"}, key: func(id int64) any { return drivers.KeyName(id) }},
	{name: "pgbouncer", binaries: []string{"pgbouncer"}, statement: postgres.Query, noPrepare: true, key: func(id int64) any { return id }},
	{name: "floor", key: pingPong},
	{name: "echo", key: pingPong},
}

// stackLibraries are the (stack, library) pairs each target is measured
// from; "" is the stack's default library.
var stackLibraries = map[string][][2]string{
	"redis":     {{"python", ""}, {"c", ""}, {"php", ""}, {"node", ""}, {"ruby", ""}, {"ruby", "hiredis"}},
	"postgres":  {{"python", ""}, {"python", "psycopg"}, {"c", ""}, {"php", ""}, {"node", ""}, {"ruby", ""}, {"java", ""}},
	"mysql":     {{"python", ""}, {"python", "pymysql"}, {"c", ""}, {"php", ""}, {"node", ""}, {"ruby", ""}, {"java", ""}},
	"memcached": {{"python", ""}, {"c", ""}, {"php", ""}},
	"pgbouncer": {{"python", ""}, {"python", "psycopg"}, {"c", ""}, {"php", ""}, {"node", ""}, {"ruby", ""}, {"java", ""}},
	"floor":     {{"c", ""}, {"python", ""}, {"ruby", ""}, {"java", ""}},
	"echo":      {{"c", ""}, {"python", ""}, {"ruby", ""}, {"java", ""}},
}

// TestStacks has each stack's agent open a connection over tcp and over
// the socket to a real local server, verified on the server side, run a
// block, and return one latency per key without errors; it logs each
// agent's overhead per op and each path's p50 (indicative only: the
// machine is shared).
func TestStacks(t *testing.T) {
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	for _, tg := range stackTargets {
		t.Run(tg.name, func(t *testing.T) {
			tg.need(t)
			srv, driver := startSeeded(t, tg.name)
			finder, ok := driver.(drivers.ConnFinder)
			if !ok {
				t.Fatalf("the %s driver cannot find another process's connections", tg.name)
			}
			for _, sl := range stackLibraries[tg.name] {
				name := sl[0]
				if sl[1] != "" {
					name += ":" + sl[1]
				}
				t.Run(name, func(t *testing.T) {
					spec, err := agents.For(".", sl[0], tg.name, family(tg.name), sl[1])
					if err != nil {
						needStack(t, err)
					}
					runStack(t, name, spec, srv, finder, tg, driver.ValueSize())
				})
			}
		})
	}
}

// requireStacks names the environment variable that turns a missing
// client stack from a skip into a failure (the stacks are installed by
// scripts/install-deps.sh --with-stacks, which make test does not run yet).
const requireStacks = "DBSOCK_REQUIRE_STACKS"

func needStack(t *testing.T, err error) {
	t.Helper()
	if os.Getenv(requireStacks) != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

func startSeeded(t *testing.T, name string) (*supply.Server, drivers.Driver) {
	t.Helper()
	l := supply.NewLocal()
	t.Cleanup(func() { _ = l.Close() })
	tt, ok := targets.Lookup(name)
	if !ok {
		t.Fatalf("no target %s", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := l.Supply(ctx, tt.Supply())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	d := tt.Settings().Driver(drivers.Workload{Rows: rows})
	for _, ep := range []drivers.Endpoint{srv.TCP(), srv.Unix()} {
		if err := d.Seed(ctx, ep); err != nil {
			t.Fatal(err)
		}
		if !srv.SeedEach && !tt.SeedEach {
			break
		}
	}
	return srv, d
}

func runStack(t *testing.T, name string, spec agents.Spec, srv *supply.Server, cf drivers.ConnFinder, tg target, valueLen int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := agents.Start(ctx, spec, agents.Limits{OpTimeout: 5 * time.Second, PerOp: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("%s agent: %s", spec.Stack, a.Hello())
	var keys []any
	for i := range 500 {
		keys = append(keys, tg.key(int64(i%rows)+1))
	}
	for _, path := range pathsOf(srv, name, tg.name) {
		ep, err := srv.Path(path)
		if err != nil {
			t.Fatal(err)
		}
		var caPEM []byte
		if path == drivers.TLS {
			ca, err := supply.TheRunCA()
			if err != nil {
				t.Fatal(err)
			}
			caPEM = ca.CertPEM()
		}
		f, err := cf.OpenFinder(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		id := "c-" + string(path)
		o, err := agents.NewOpen(id, tg.name, ep, agents.Token(id), tg.statement, caPEM)
		if err != nil {
			t.Fatal(err)
		}
		o.NoPrepare = tg.noPrepare
		_, v, err := a.OpenVerified(ctx, f, o)
		if err != nil {
			t.Fatal(err)
		}
		r, err := a.Block(ctx, agents.Block{ID: id, Keys: keys, Warmup: 100, ValueLength: valueLen})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Ns) != len(keys) || len(r.Errors) > 0 {
			t.Fatalf("%s: %d latencies for %d keys, errors %+v", path, len(r.Ns), len(keys), r.Errors[:min(3, len(r.Errors))])
		}
		t.Logf("%s verified (%s): p50 %s over %d ops", path, v.Evidence, p50(r.Ns), len(r.Ns))
		if path == drivers.TCP && tg.binaries != nil { // dbsock's own servers have no rows
			checkValues(ctx, t, a, id, tg, valueLen)
		}
		if err := a.CloseConn(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ns, err := a.Overhead(ctx, 10000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("overhead per op (empty op, p50 of %d): %s", len(ns), p50(ns))
}

// checkValues has the agent read a value of another length than it is
// told and a key that does not exist: each op is an error of its own.
func checkValues(ctx context.Context, t *testing.T, a *agents.Agent, id string, tg target, valueLen int) {
	t.Helper()
	r, err := a.Block(ctx, agents.Block{ID: id, Keys: []any{tg.key(1), tg.key(rows + 1), tg.key(2)}, ValueLength: valueLen + 1})
	if err != nil {
		t.Fatal(err)
	}
	wrong := fmt.Sprintf("value of %d bytes", valueLen)
	want := []string{wrong, "no value", wrong}
	if len(r.Errors) != 3 {
		t.Fatalf("3 ops that read the wrong length or nothing: errors %+v", r.Errors)
	}
	for i, e := range r.Errors {
		if e.Index != i || !strings.Contains(e.Message, want[i]) {
			t.Errorf("op %d: error %+v, want one saying %q", i, e, want[i])
		}
	}
}

// noTLS are the (stack[:library], target) pairs whose library has no TLS
// here, and the targets whose server does not show dbsock another
// session's TLS.
var noTLS = map[string]bool{"cmd/redis": true, "c/redis": true, "ruby:hiredis/redis": true, "c/memcached": true, "php/memcached": true,
	"python/memcached": true, "mysql": true}

// pathsOf are the paths a stack's agent (stack, or stack:library) is
// tested on: tcp and unix, tcp6 where the server listens on ::1, and tls
// where the server serves it and the library and the server's check can.
func pathsOf(srv *supply.Server, stack, target string) []drivers.Transport {
	paths := []drivers.Transport{drivers.TCP, drivers.Unix}
	if _, err := srv.Path(drivers.TCP6); err == nil {
		paths = append(paths, drivers.TCP6)
	}
	if _, err := srv.Path(drivers.TLS); err == nil && !noTLS[stack+"/"+target] && !noTLS[target] {
		paths = append(paths, drivers.TLS)
	}
	return paths
}

func p50(ns []int64) time.Duration {
	s := slices.Clone(ns)
	slices.Sort(s)
	return time.Duration(s[len(s)/2])
}

// startLimits are for tests of what an agent does, not of how long dbsock
// waits: a Python agent that starts another (liar.py) may take more than
// limits' half second to say hello on a busy machine.
var startLimits = agents.Limits{OpTimeout: 5 * time.Second, PerOp: time.Millisecond}

// TestAgentThatLies: an agent asked for TCP that opens the socket, or
// whose connection carries another token than its own, is caught on the
// server side before any op, and stopped, on every target (memcached
// names no connection, so only the first).
func TestAgentThatLies(t *testing.T) {
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	for _, tg := range stackTargets {
		t.Run(tg.name, func(t *testing.T) {
			tg.need(t)
			srv, driver := startSeeded(t, tg.name)
			f, err := driver.(drivers.ConnFinder).OpenFinder(context.Background(), srv.TCP())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, lie := range []string{"socket", "notoken"} {
				if lie == "notoken" && tg.name == "memcached" {
					continue
				}
				family, err := agents.Family(tg.name)
				if err != nil {
					t.Fatal(err)
				}
				a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"/usr/bin/python3", "testdata/liar.py", srv.Unix().Address, family, lie}}, startLimits)
				if err != nil {
					t.Fatal(err)
				}
				o, err := agents.NewOpen("c1", tg.name, srv.TCP(), agents.Token("c1"), tg.statement, nil)
				if err != nil {
					t.Fatal(err)
				}
				o.NoPrepare = tg.noPrepare
				_, _, err = a.OpenVerified(context.Background(), f, o)
				if !errors.Is(err, agents.ErrRoute) {
					t.Fatalf("an agent that lies (%s): %v", lie, err)
				}
				t.Logf("%s: %v", lie, err)
				assertGone(t, a.PID())
			}
		})
	}
}

// TestTokenTwice: a second connection that carries the token of one
// already open is refused: the server shows two connections of that name
// (Redis, PostgreSQL), or the token's lock is held by another connection
// than the one the agent reports (MariaDB), or the floor server has two
// connections that said hello with it. memcached names no connection, so
// it is not among them.
func TestTokenTwice(t *testing.T) {
	if err := agents.Installed("."); err != nil {
		needStack(t, err)
	}
	for _, tg := range append(stackTargets[:3:3], stackTargets[5]) {
		t.Run(tg.name, func(t *testing.T) {
			tg.need(t)
			spec, err := agents.For(".", "python", tg.name, family(tg.name), "")
			if err != nil {
				needStack(t, err)
			}
			srv, driver := startSeeded(t, tg.name)
			ctx := context.Background()
			f, err := driver.(drivers.ConnFinder).OpenFinder(ctx, srv.TCP())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a, err := agents.Start(ctx, spec, startLimits)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			token := agents.Token("c1")
			for i, id := range []string{"c1", "c2"} {
				o, err := agents.NewOpen(id, tg.name, srv.TCP(), token, tg.statement, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = a.OpenVerified(ctx, f, o)
				if i == 0 && err != nil {
					t.Fatal(err)
				}
				if i == 1 && !errors.Is(err, agents.ErrRoute) {
					t.Fatalf("a second connection with the token of the first: %v", err)
				}
				if i == 1 {
					t.Logf("refused: %v", err)
				}
			}
			assertGone(t, a.PID())
		})
	}
}
