package main

import (
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestGoAgentConnect: dbsock's own agent times the connect scenario, each
// op a connection of its own, alone and with two at once, checked as
// every agent's are (the server's count of the connections it accepted,
// where it keeps one).
func TestGoAgentConnect(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "postgres")
	agent := "cmd:" + staticDbsock(t) + " agent"
	for _, conc := range []string{"1", "2"} {
		rep := runJSON(t, "run", "redis", "postgres", "--clients", agent, "--provider", "local", "--scenario", "connect", "--paths", "tcp,unix",
			"--concurrency", conc, "--n", "40", "--blocks", "2", "--instances", "1", "--warmup", "4")
		if len(rep.Runs) != 4 {
			t.Errorf("--concurrency %s: %d runs; want redis and postgres over tcp and unix", conc, len(rep.Runs))
		}
		for _, r := range rep.Runs {
			if r.Stack != "cmd" || r.Client == nil || r.Client.Audit == "" || !r.TransportVerified || r.N != 40 || r.Errors != 0 {
				t.Errorf("--concurrency %s, %s over %s: stack %q, client %+v, verified %v, %d ops, %d errors; want the cmd agent's 40 connects, audited",
					conc, r.Target, r.Transport, r.Stack, r.Client, r.TransportVerified, r.N, r.Errors)
			}
		}
	}
}

// TestClientContainerConnect: with --client container, the connect
// scenario is timed by dbsock's agent in the client container.
func TestClientContainerConnect(t *testing.T) {
	needImages(t)
	t.Setenv("TMPDIR", shortTempDir(t))
	bin := staticDbsock(t)
	r := runJSON(t, append([]string{"run", "redis", "--provider", "docker", "--client", "container", "--client-binary", bin, "--scenario", "connect",
		"--paths", "tcp,unix", "--n", "40", "--blocks", "2", "--instances", "1", "--warmup", "4"}, offlineImages...)...)
	if len(r.Runs) != 2 {
		t.Errorf("%d runs; want redis over tcp and unix", len(r.Runs))
	}
	for _, run := range r.Runs {
		if !run.TransportVerified || run.Errors != 0 || run.N != 40 || run.Client == nil || run.Client.Language != "go" {
			t.Errorf("%s %s: verified %v, errors %d, n %d, client %+v; want Go's agent's 40 connects %s", run.Target, run.Transport, run.TransportVerified, run.Errors, run.N, run.Client, run.Error)
		}
	}
}
