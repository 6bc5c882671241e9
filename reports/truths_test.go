package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// A target whose server read fewer rows than the workload seeds (FerretDB
// reads one document) is named beside the rows in the method sentence,
// which otherwise says every lookup read one of the seeded rows.
func TestMethodSaysATargetReadFewerRows(t *testing.T) {
	r := fixture(t)
	r.Config.Workload = &results.Workload{Rows: 10000, Keys: "uniform", Op: "read"}
	if got := methodSentence(r); !strings.Contains(got, "one of 10,000 seeded rows, chosen") {
		t.Fatalf("a target that read every row: %s", got)
	}
	r.Targets[0].Rows = 1
	want := "one of 10,000 seeded rows (redis: the same single row, as its details say), chosen"
	if got := methodSentence(r); !strings.Contains(got, want) {
		t.Fatalf("a target limited to one row: got\n%s\nwant it to contain %q", got, want)
	}
	r.Targets[0].Rows = 500
	if got := methodSentence(r); !strings.Contains(got, "(redis: one of 500 rows, as its details say)") {
		t.Fatalf("a target limited to 500 rows: %s", got)
	}
	r.Config.Workload.KeysFrom = map[string]string{"redis": "keys.txt"}
	if got := methodSentence(r); strings.Contains(got, "as its details say") {
		t.Fatalf("a target reading the user's keys is said by the keys' phrase: %s", got)
	}
}

// The Environment table lists the Go client libraries that did the run's
// ops, not every one the binary carries: a redis-only run names go-redis
// alone.
func TestEnvironmentListsTheDriversTheRunUsed(t *testing.T) {
	r := fixture(t)
	r.Environment.Drivers = map[string]string{"github.com/redis/go-redis/v9": "v9.23.0",
		"github.com/go-sql-driver/mysql": "v1.9.3", "github.com/jackc/pgx/v5": "v5.7.6"}
	for i := range r.Runs {
		r.Runs[i].Client = &results.Client{Language: "go", RuntimeVersion: "go1.26.8", Library: "github.com/redis/go-redis/v9", LibraryVersion: "v9.23.0"}
	}
	var b strings.Builder
	writeEnvironment(&b, r)
	got := b.String()
	if !strings.Contains(got, "go-redis/v9 v9.23.0") || strings.Contains(got, "mysql") || strings.Contains(got, "pgx") {
		t.Fatalf("a redis-only run's environment:\n%s", got)
	}
	for i := range r.Runs {
		r.Runs[i].Client = nil // an older report: its runs name no client
	}
	b.Reset()
	writeEnvironment(&b, r)
	if got := b.String(); !strings.Contains(got, "pgx/v5 v5.7.6") || !strings.Contains(got, "go-redis") {
		t.Fatalf("a report whose runs name no client lists every library it carries:\n%s", got)
	}
}

// A side that counted no read or write call over its ops (MariaDB and
// PostgreSQL read their sockets with recv) says "not counted", never
// 0.00; a side that counted some gives them per op.
func TestCPUSaysCallsNotCountedRatherThanZero(t *testing.T) {
	ns := func(v int64) *int64 { return &v }
	side := func(client, server int64) *results.CPU {
		return results.NewCPU(1000, 20_000_000, 1800, ns(17_000_000), ns(1050), "local process tree").WithSyscalls(client, ns(server))
	}
	tcp, unix := side(2660, 0), side(2640, 0)
	var b strings.Builder
	writeCPU(&b, &results.Summary{Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{CPU: tcp}}, {Path: drivers.Unix, Side: results.Side{CPU: unix}}}})
	got := b.String()
	if !strings.Contains(got, "| TCP | 20.0 µs | 1.80 | 2.66 | 17.0 µs | 1.05 | not counted |") || !strings.Contains(got, `"Not counted"`) {
		t.Fatalf("a server that counted no read+write call:\n%s", got)
	}
	if tcp.ServerSyscallsPerOp != nil {
		t.Fatalf("server calls per op recorded as %v, want none: 0 is not a measurement", *tcp.ServerSyscallsPerOp)
	}
	tcp, unix = side(2660, 2000), side(2640, 2000)
	b.Reset()
	writeCPU(&b, &results.Summary{Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{CPU: tcp}}, {Path: drivers.Unix, Side: results.Side{CPU: unix}}}})
	if got := b.String(); !strings.Contains(got, "| 1.05 | 2.00 |") || strings.Contains(got, "not counted") {
		t.Fatalf("a server that counted its calls:\n%s", got)
	}
}

// A negative saving is a cost: "costs 4.1 µs more", never "saves -4.1 µs".
func TestCPUSavingThatIsACost(t *testing.T) {
	server := 2300.0
	var b strings.Builder
	cpu := results.NewCPU(1000, 20_000_000, 1800, nil, nil, "x")
	sum := &results.Summary{Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{CPU: cpu}}, {Path: drivers.Unix, Side: results.Side{CPU: cpu}}},
		Comparisons: []results.Comparison{{Path: drivers.Unix, Baseline: drivers.TCP, CPUSaving: &results.CPUSaving{ClientNsPerOp: -4100, ServerNsPerOp: &server}}}}
	writeCPU(&b, sum)
	got := b.String()
	if want := "**Unix costs 4.1 µs more client CPU per op and saves 2.3 µs of server CPU per op.**"; !strings.Contains(got, want) || strings.Contains(got, "-4.1") {
		t.Fatalf("got\n%s\nwant %q", got, want)
	}
	b.Reset()
	server = -900
	writeCPU(&b, sum)
	if want := "**Unix costs 4.1 µs more client CPU per op and 0.9 µs more server CPU per op.**"; !strings.Contains(b.String(), want) {
		t.Fatalf("got\n%s\nwant %q", b.String(), want)
	}
}

// A server that ran from dbsock's stand-in image (the official one could
// not be pulled) says so in the headline's server column, not only in its
// details.
func TestHeadlineNamesAStandInImage(t *testing.T) {
	r := fixture(t)
	var b strings.Builder
	writeHeadline(&b, r)
	if strings.Contains(b.String(), "stand-in") {
		t.Fatalf("a local server is no stand-in:\n%s", b.String())
	}
	r.Targets[0].Provider, r.Targets[0].Image = "docker", "dbsock/redis:7.0"
	b.Reset()
	writeHeadline(&b, r)
	if want := "| redis | Redis 7.0.15 (dbsock's stand-in image dbsock/redis:7.0, not the official one) |"; !strings.Contains(b.String(), want) {
		t.Fatalf("got\n%s\nwant a row with %q", b.String(), want)
	}
}
