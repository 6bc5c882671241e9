package main

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestRedisPipelineOfYourCommand: --pipeline with your own Redis command
// pipelines that command, where it used to index dbsock's own key names,
// which a --query run never makes (a panic).
func TestRedisPipelineOfYourCommand(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	for _, args := range [][]string{
		{"--query", "STRLEN dbsock:user:{key}"},
		{"--query", "HLEN dbsock:user:{key}"}, // an empty reply: an error, not a panic
	} {
		if args[1] == "HLEN dbsock:user:{key}" {
			code, _, stderr := dbsock(t, append([]string{"run", "redis", "--provider", "local", "--pipeline", "16", "--n", "200",
				"--instances", "1", "--rounds", "1", "--warmup", "10", "-q"}, args...)...)
			if code == 0 || !strings.Contains(stderr, "returned nothing") {
				t.Errorf("%v: exit %d, %s; want the query refused for returning nothing", args, code, stderr)
			}
			continue
		}
		rep := runJSON(t, append([]string{"run", "redis", "--provider", "local", "--pipeline", "16", "--n", "200",
			"--instances", "1", "--rounds", "1", "--warmup", "10"}, args...)...)
		for _, r := range rep.Runs {
			if r.Errors != 0 || r.N != 200 || !r.TransportVerified || r.Pipeline != 16 {
				t.Errorf("%v over %s: %d ops, %d errors, verified %v, pipeline %d", args, r.Transport, r.N, r.Errors, r.TransportVerified, r.Pipeline)
			}
		}
	}
}
