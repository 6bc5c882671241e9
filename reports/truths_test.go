package reports

import (
	"strings"
	"testing"

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
