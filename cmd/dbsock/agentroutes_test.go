package main

import (
	"testing"
)

// TestAgentsOnDockerRoutes: an agent dials the published port and the
// bridge itself, and the server sees each of its connections there (the
// network's gateway as the peer): the C stack's agent on the host, and
// dbsock's own agent in the client container.
func TestAgentsOnDockerRoutes(t *testing.T) {
	needImages(t)
	needStacks(t)
	t.Setenv("TMPDIR", shortTempDir(t))
	bin := staticDbsock(t)
	common := []string{"run", "redis", "--provider", "docker", "--paths", "tcp,published,bridge,unix", "--n", "60", "--blocks", "2", "--instances", "1", "--warmup", "4"}
	for name, args := range map[string][]string{
		"c on the host":     {"--clients", "c"},
		"go in a container": {"--client", "container", "--client-binary", bin},
	} {
		t.Run(name, func(t *testing.T) {
			r := runJSON(t, append(append(append([]string{}, common...), args...), offlineImages...)...)
			seen := map[string]bool{}
			for _, run := range r.Runs {
				seen[string(run.Transport)] = true
				if !run.TransportVerified || run.Evidence == "" || run.Errors != 0 || run.N != 60 || run.Client == nil || run.Client.Audit == "" {
					t.Errorf("%s: verified %v (%q), errors %d, n %d, client %+v; want 60 lookups on a connection the server showed there, audited",
						run.Transport, run.TransportVerified, run.Evidence, run.Errors, run.N, run.Client)
				}
			}
			for _, p := range []string{"tcp", "published", "bridge", "unix"} {
				if !seen[p] {
					t.Errorf("no run over %s (runs: %v)", p, seen)
				}
			}
		})
	}
}
