package main

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"
)

// TestGoAgent: dbsock's own Go client served as an agent (dbsock agent,
// run here as a user's cmd: agent) measures real local servers at rest
// and at load: every connection it opens is verified on the server side
// on its path, every block audited, and the report names Go's driver and
// its worker model.
func TestGoAgent(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "postgres")
	agent := "cmd:" + staticDbsock(t) + " agent"
	for _, tc := range []struct {
		name string
		args []string
		load bool
	}{
		{"at rest", []string{"--paths", "tcp,tls,unix"}, false},
		{"at load", []string{"--paths", "tcp,unix", "--concurrency", "4", "--rate", "1000"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runJSON(t, append([]string{"run", "redis", "postgres", "--clients", agent, "--provider", "local",
				"--n", "400", "--blocks", "2", "--instances", "1", "--warmup", "10"}, tc.args...)...)
			libs := map[string]string{"redis": "github.com/redis/go-redis/v9", "postgres": "github.com/jackc/pgx/v5"}
			seen := map[string]bool{}
			for _, r := range rep.Runs {
				seen[r.Target+" "+string(r.Transport)] = true
				c := r.Client
				if r.Stack != "cmd" || c == nil || c.Language != "cmd" || !strings.HasPrefix(c.RuntimeVersion, "go ") || c.Library != libs[r.Target] || c.LibraryVersion == "" || c.Audit == "" {
					t.Errorf("%s over %s: stack %q, client %+v; want the cmd agent in Go, Go's own %s driver, audited", r.Target, r.Transport, r.Stack, c, libs[r.Target])
					continue
				}
				if !r.TransportVerified || r.Evidence == "" || r.N != 400 || r.Errors != 0 {
					t.Errorf("%s over %s: verified %v (%s), %d ops, %d errors; want the 400 lookups on a connection the server showed",
						r.Target, r.Transport, r.TransportVerified, r.Evidence, r.N, r.Errors)
				}
				if tc.load && (c.Workers != "goroutines" || r.Concurrency != 4 || r.Generator == nil || r.Generator.OfferedRate != 1000) {
					t.Errorf("%s over %s at load: workers %q, concurrency %d, generator %+v; want 4 goroutines paced at 1000/s",
						r.Target, r.Transport, c.Workers, r.Concurrency, r.Generator)
				}
			}
			for _, target := range []string{"redis", "postgres"} {
				for _, p := range strings.Split(tc.args[1], ",") {
					if !seen[target+" "+string(drivers.Transport(p))] {
						t.Errorf("no run of %s over %s (runs: %v)", target, p, seen)
					}
				}
			}
		})
	}
}
