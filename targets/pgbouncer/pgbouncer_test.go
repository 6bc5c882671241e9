package pgbouncer_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
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
}

func TestDocker(t *testing.T)  { pipelinetest.Run(t, name, "docker") }
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
