package pipeline

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestErrorRatesSeeEveryPath: a case whose errors are all on a further
// path (tls here) fails --max-error-rate, naming that path; TCP and the
// socket clean, and a path under the limit, pass.
func TestErrorRatesSeeEveryPath(t *testing.T) {
	c := results.Case{Target: "redis", Scenario: "pk-lookup", Concurrency: 1}
	clean := results.Side{N: 1000}
	rep := &results.Report{
		Runs: []results.Run{{Case: c, Transport: drivers.TLS, Failure: results.Failure{Error: "read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer"}}},
		Summary: []results.Summary{{Case: c, Sides: []results.PathSide{
			{Path: drivers.TCP, Side: clean}, {Path: drivers.Unix, Side: clean},
			{Path: drivers.TCP6, Side: results.Side{N: 1000, Errors: 1, ErrorRate: 0.001}},
			{Path: drivers.TLS, Side: results.Side{N: 1000, Errors: 400, ErrorRate: 0.4}},
		}}},
	}
	errs := Plan{Gates: Gates{MaxErrorRate: 0.01}}.errorRates(rep)
	if len(errs) != 1 {
		t.Fatalf("%d errors, want one (the tls path): %v", len(errs), errs)
	}
	msg := errs[0].Error()
	for _, want := range []string{"400 of 1000", drivers.TLS.Label(), "connection reset by peer"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if errs := (Plan{Gates: Gates{MaxErrorRate: -1}}).errorRates(rep); errs != nil {
		t.Errorf("a negative limit turns the check off, got %v", errs)
	}
}
