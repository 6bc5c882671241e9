package pgbouncer_test

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets/pgbouncer"
	"github.com/dbsock/dbsock/targets/targettest"
)

// name is the target under test.
const name = "pgbouncer"

var binaries = []string{"pgbouncer"}

func TestLocal(t *testing.T) {
	rep := pipelinetest.Run(t, name, "local", binaries...)
	tg := rep.Targets[0]
	if tg.Server.Product != "PgBouncer" || !strings.Contains(tg.Server.Detail, "in front of PostgreSQL") || !strings.Contains(tg.Serving, "transaction pooling") {
		t.Errorf("the report does not say what serves pgbouncer: %+v", tg)
	}
	overSocket(t, rep)
}

func TestDocker(t *testing.T) { overSocket(t, pipelinetest.Run(t, name, "docker")) }

// overSocket fails the test unless rep says that the PgBouncer dbsock
// started reaches PostgreSQL over its socket, as its SHOW SERVERS shows.
func overSocket(t *testing.T, rep *results.Report) {
	t.Helper()
	if d := rep.Targets[0].Server.Detail; !strings.Contains(d, "which it reaches over its Unix socket (SHOW SERVERS: addr unix port ") {
		t.Errorf("the server's detail %q does not say the route SHOW SERVERS showed", d)
	}
}

// TestBackendRouteReadFromPgBouncer: the report says how PgBouncer
// reaches PostgreSQL as PgBouncer's own SHOW SERVERS shows it: two
// PgBouncers the user runs, one in front of PostgreSQL's TCP address and
// one in front of its socket, read differently, and no sentence states a
// route that was not read.
func TestBackendRouteReadFromPgBouncer(t *testing.T) {
	testutil.NeedAny(t, binaries...)
	tcp := targettest.SuppliedAs(t, supply.Target{Name: name, Recipe: pgbouncer.TCPBackend(), Serving: "PgBouncer"}, "local")
	unix := targettest.Local(t, name, binaries...)
	// PgBouncer reaches PostgreSQL at a port of PostgreSQL's, not its own.
	_, bouncerPort, _ := strings.Cut(tcp.TCP().Address, ":")
	for _, tc := range []struct {
		srv       *supply.Server
		want, not string
	}{
		{tcp, `which it reaches over TCP \(SHOW SERVERS: addr 127\.0\.0\.1 port [0-9]+\)`, "Unix socket"},
		{unix, `which it reaches over its Unix socket \(SHOW SERVERS: addr unix port [0-9]+\)`, "over TCP"},
	} {
		rep := pipelinetest.Measure(t, name, targettest.External(name, tc.srv), pipelinetest.Loop{Settings: scenarios.Settings{N: 100, Warmup: 10, Rounds: 1, Seed: 1}})
		ti := rep.Targets[0]
		var md strings.Builder
		if err := reports.Markdown(&md, rep); err != nil {
			t.Fatal(err)
		}
		said := regexp.MustCompile(tc.want).FindString(md.String())
		if said == "" || strings.Contains(ti.Server.Detail, tc.not) || strings.HasSuffix(said, " port "+bouncerPort+")") {
			t.Errorf("PgBouncer at %s: the server's detail is %q; want the report to say %s", tc.srv.TCP().Address, ti.Server.Detail, tc.want)
		}
		if strings.Contains(md.String(), "whichever transport") || strings.Contains(ti.Serving, "socket") {
			t.Errorf("PgBouncer at %s: a route stated without being read: serving %q", tc.srv.TCP().Address, ti.Serving)
		}
	}
}

// TestBackendRouteWords: SHOW SERVERS rows of the measuring user's
// database are worded as they show the route; none of them, or rows of
// others only, state none.
func TestBackendRouteWords(t *testing.T) {
	rows := []map[string]string{
		{"type": "S", "user": "dbsock", "database": "postgres", "addr": "unix", "port": "5432"},
		{"type": "S", "user": "dbsock", "database": "postgres", "addr": "unix", "port": "5432"},
		{"type": "S", "user": "other", "database": "postgres", "addr": "10.0.0.9", "port": "5432"},
	}
	for _, tc := range []struct {
		user, want string
	}{
		{"dbsock", ", which it reaches over its Unix socket (SHOW SERVERS: addr unix port 5432)"},
		{"other", ", which it reaches over TCP (SHOW SERVERS: addr 10.0.0.9 port 5432)"},
		{"nobody", "; its route there is not stated: SHOW SERVERS lists no connection of user nobody to database postgres"},
	} {
		if got := pgbouncer.LegOf(rows, tc.user, "postgres"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.user, got, tc.want)
		}
	}
	both := append(rows, map[string]string{"user": "dbsock", "database": "postgres", "addr": "127.0.0.1", "port": "5439"})
	if got := pgbouncer.LegOf(both, "dbsock", "postgres"); got != ", which it reaches over its Unix socket and over TCP (SHOW SERVERS: addr unix port 5432; addr 127.0.0.1 port 5439)" {
		t.Errorf("both: %q", got)
	}
}
func TestCompose(t *testing.T) { pipelinetest.Run(t, name, "compose") }

// TestExternal measures a PgBouncer that is already running.
func TestExternal(t *testing.T) {
	srv := targettest.Local(t, name, binaries...)
	if err := pipelinetest.Mismatched(t, name, srv.TCP(), srv.Unix()); err != nil {
		t.Fatalf("the right endpoints: %v", err)
	}
}

// TestWrongSocket: PostgreSQL's own socket given as PgBouncer's is said to
// be another server's.
func TestWrongSocket(t *testing.T) {
	srv := targettest.Local(t, name, binaries...)
	pg := targettest.Local(t, "postgres", "initdb")
	unix := pg.Unix()
	unix.User, unix.Password, unix.Database = srv.Unix().User, srv.Unix().Password, srv.Unix().Database
	err := pipelinetest.Mismatched(t, name, srv.TCP(), unix)
	targettest.Contains(t, err, "pgbouncer", pg.Unix().Address, "another server's socket")
}

func TestFindClient(t *testing.T) {
	rows := []map[string]string{
		{"type": "C", "database": "pgbouncer", "addr": "unix", "port": "6432", "application_name": ""},
		{"type": "C", "database": "postgres", "addr": "127.0.0.1", "port": "5001", "application_name": "dbsock-0000aaaa"},
		{"type": "C", "database": "postgres", "addr": "unix", "port": "6432", "application_name": "dbsock-0000bbbb"},
	}
	v, err := pgbouncer.FindClient(rows, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5001}, "dbsock-0000aaaa")
	if err != nil || v.Transport != drivers.TCP {
		t.Fatalf("tcp: %+v, %v", v, err)
	}
	v, err = pgbouncer.FindClient(rows, &net.UnixAddr{Net: "unix"}, "dbsock-0000bbbb")
	if err != nil || v.Transport != drivers.Unix {
		t.Fatalf("unix: %+v, %v", v, err)
	}
	if _, err := pgbouncer.FindClient(rows, &net.UnixAddr{Net: "unix"}, "dbsock-0000cccc"); err == nil {
		t.Fatal("another Unix client verified this one")
	}
	if _, err := pgbouncer.FindClient(rows, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5002}, "dbsock-0000aaaa"); err == nil {
		t.Fatal("a TCP client at another port verified this one")
	}
	// Through docker-proxy PgBouncer sees the proxy's address: the row of
	// this connection's own name, off loopback, is this connection.
	rows = append(rows, map[string]string{"type": "C", "addr": "172.18.0.1", "port": "40000", "application_name": "dbsock-0000dddd"})
	v, err = pgbouncer.FindClient(rows, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5003}, "dbsock-0000dddd")
	if err != nil || v.Transport != drivers.TCP || v.Peer != "172.18.0.1" {
		t.Fatalf("through a proxy: %+v, %v", v, err)
	}
	if _, err := drivers.CheckTransport(context.Background(), verified(v), drivers.Endpoint{Transport: drivers.Published}); err != nil {
		t.Errorf("a client through a proxy is not the published path: %v", err)
	}
}

// verified is a drivers.Conn whose server reports v.
type verified drivers.Verification

func (v verified) Do(context.Context) error { return nil }
func (v verified) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification(v), nil
}
func (verified) Close() error { return nil }

// TestLoginRetry: every PgBouncer dbsock starts (its local configuration
// and its image's entrypoint) retries a failed login to PostgreSQL after
// 0.2 s, as its own console says: with PgBouncer's default of 15 s, a
// client that came before PostgreSQL was up after a restart made it
// refuse every client for 15 s, at each restart of each server instance.
func TestLoginRetry(t *testing.T) {
	for _, provider := range []string{"local", "docker"} {
		t.Run(provider, func(t *testing.T) {
			if provider == "local" {
				testutil.NeedAny(t, binaries...)
			}
			srv := targettest.Supplied(t, name, provider)
			rows, err := pgbouncer.ConsoleRows(context.Background(), srv.Unix(), "SHOW CONFIG")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r["key"] == "server_login_retry" {
					if r["value"] != "0.2" {
						t.Errorf("server_login_retry is %q, want 0.2", r["value"])
					}
					return
				}
			}
			t.Fatalf("SHOW CONFIG has no server_login_retry in %d rows", len(rows))
		})
	}
}
