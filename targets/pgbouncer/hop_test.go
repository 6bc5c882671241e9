package pgbouncer_test

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline/pipelinetest"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/pgbouncer"
	"github.com/dbsock/dbsock/targets/targettest"
)

// measureHops runs tg over the four sides against its local servers, the
// baseline both legs on TCP.
func measureHops(t *testing.T, tg *targets.Target) (*results.Report, error) {
	t.Helper()
	return pipelinetest.MeasureHops(t, tg, "local")
}

// TestFourSidesThroughPgBouncer: the four routes of two legs, each run's
// legs checked from PgBouncer's console and from PostgreSQL, and the
// report says which leg each comparison moved.
func TestFourSidesThroughPgBouncer(t *testing.T) {
	testutil.NeedAny(t, binaries...)
	rep, err := measureHops(t, targettest.Lookup(t, name))
	if err != nil {
		t.Fatal(err)
	}
	checkFourSides(t, rep)
}

// TestFourSidesThroughPgBouncerInAContainer: the same through the docker
// provider's container of PgBouncer and PostgreSQL, the client's leg over
// its published port or its bind-mounted socket, the hop's over
// PostgreSQL's socket or 127.0.0.1 inside the container.
func TestFourSidesThroughPgBouncerInAContainer(t *testing.T) {
	rep, err := pipelinetest.MeasureHops(t, targettest.Lookup(t, name), "docker")
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Targets[0].Provider; p != "docker" {
		t.Fatalf("provider %q, want docker", p)
	}
	checkFourSides(t, rep)
}

// checkFourSides fails the test unless every run of rep was verified with
// the hop's leg its path names, and its Markdown says which leg each
// comparison moved.
func checkFourSides(t *testing.T, rep *results.Report) {
	t.Helper()
	want := map[drivers.Transport]string{
		drivers.TCP: "addr unix", drivers.Unix: "addr unix", drivers.TCPHopTCP: "addr 127.0.0.1", drivers.UnixHopTCP: "addr 127.0.0.1",
	}
	for _, r := range rep.Runs {
		leg := "the hop's leg: SHOW SERVERS " + want[r.Transport] + ", PostgreSQL's inet_client_addr() "
		if !r.TransportVerified || r.Errors != 0 || !strings.Contains(r.Evidence, leg) {
			t.Errorf("%s round %d: verified %v, errors %d, evidence %q; want %q", r.Transport, r.Round, r.TransportVerified, r.Errors, r.Evidence, leg)
		}
	}
	s := &rep.Summary[0]
	moves := rep.HopMoves(s)
	if len(moves) != 3 {
		t.Fatalf("%d comparisons read as legs, want 3: %+v", len(moves), moves)
	}
	pipelinetest.ReportSays(t, rep,
		"| pgbouncer | the hop's leg (the client's held on TCP) | TCP, hop TCP | TCP, hop Unix | ",
		"| pgbouncer | the client's leg (the hop's held on TCP) | TCP, hop TCP | Unix, hop TCP | ",
		"| pgbouncer | both legs | TCP, hop TCP | Unix, hop Unix | ",
	)
}

// TestALyingHopFailsItsCase: a PgBouncer whose database for the tcp-tcp
// and unix-tcp paths reaches PostgreSQL over its socket fails the case,
// with PgBouncer's own evidence quoted.
func TestALyingHopFailsItsCase(t *testing.T) {
	testutil.NeedAny(t, binaries...)
	tg := *targettest.Lookup(t, name)
	tg.Recipe = pgbouncer.LyingHop()
	rep, err := measureHops(t, &tg)
	got := pipelinetest.Failures(rep, err)
	if !strings.Contains(got, "PgBouncer reaches PostgreSQL over Unix, not TCP as the tcp-tcp path names (SHOW SERVERS: addr unix for database "+pgbouncer.OverTCP+")") {
		t.Fatalf("a lying hop's leg was not refused with its evidence: %v", got)
	}
}

// TestCheckHop: both ends' views of the hop's leg, each able to fail it.
func TestCheckHop(t *testing.T) {
	ep := drivers.Endpoint{Transport: drivers.TCPHopTCP, User: "dbsock", Database: pgbouncer.OverTCP, Hop: drivers.TCP}
	rows := func(addr string) []map[string]string {
		return []map[string]string{
			{"user": "dbsock", "database": pgbouncer.OverTCP, "addr": addr, "port": "5432"},
			{"user": "dbsock", "database": "dbsock", "addr": "unix", "port": "5432"}, // another database's
		}
	}
	pgTCP := &drivers.Verification{Transport: drivers.TCP, Evidence: "inet_client_addr() = 127.0.0.1/32"}
	pgUnix := &drivers.Verification{Transport: drivers.Unix, Evidence: "inet_client_addr() is NULL"}
	for _, tc := range []struct {
		name    string
		servers []map[string]string
		pg      *drivers.Verification
		want    string
	}{
		{"both ends agree", rows("127.0.0.1"), pgTCP, "SHOW CLIENTS: x; the hop's leg: SHOW SERVERS addr 127.0.0.1, PostgreSQL's inet_client_addr() = 127.0.0.1/32"},
		{"PgBouncer's end alone", rows("127.0.0.1"), nil, "SHOW CLIENTS: x; the hop's leg: SHOW SERVERS addr 127.0.0.1"},
		{"PgBouncer on the socket", rows("unix"), pgTCP, "error: PgBouncer reaches PostgreSQL over Unix, not TCP as the tcp-tcp path names (SHOW SERVERS: addr unix for database " + pgbouncer.OverTCP + ")"},
		{"PostgreSQL sees the socket", rows("127.0.0.1"), pgUnix, "error: PostgreSQL sees PgBouncer's session over Unix, not TCP as the tcp-tcp path names (inet_client_addr() is NULL)"},
		{"no server connection", rows("127.0.0.1")[1:], pgTCP, "error: SHOW SERVERS lists no connection of user dbsock to database " + pgbouncer.OverTCP + ", so the hop's leg of the tcp-tcp path is not known"},
	} {
		v, err := pgbouncer.CheckHop(drivers.Verification{Evidence: "SHOW CLIENTS: x"}, ep, tc.pg, tc.servers)
		got := v.Evidence
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if v, err := pgbouncer.CheckHop(drivers.Verification{Evidence: "e"}, drivers.Endpoint{Transport: drivers.TCP}, pgUnix, nil); err != nil || v.Evidence != "e" {
		t.Errorf("an endpoint that names no hop's leg was checked: %q %v", v.Evidence, err)
	}
}
