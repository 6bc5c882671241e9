package results

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestThresholdNamesAStack: TARGET@STACK checks that client stack's case
// alone (go names Go's), TARGET every stack's, and a stack the run did not
// measure fails with what is missing.
func TestThresholdNamesAStack(t *testing.T) {
	r := &Report{Summary: []Summary{
		{Case: Case{Target: "redis", Scenario: "pk"}, Sides: []PathSide{{Path: drivers.Unix, Side: Side{N: 1, Latency: Latency{P50: 30_000}}}}},
		{Case: Case{Target: "redis", Scenario: "pk", Stack: "python"}, Sides: []PathSide{{Path: drivers.Unix, Side: Side{N: 1, Latency: Latency{P50: 50_000}}}}},
	}}
	for _, s := range []string{"@python.unix.p50<1ms", "redis@.unix.p50<1ms"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted it", s)
		}
	}
	for expr, want := range map[string]string{
		"redis@python.unix.p50<40us": "python:false",
		"redis@go.unix.p50<40us":     ":true",
		"redis.unix.p50<40us":        ":true python:false",
		"redis@node.unix.p50<40us":   ":false",
	} {
		th, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, res := range Evaluate(r, []Threshold{th}) {
			got = append(got, res.Stack+":"+map[bool]string{true: "true", false: "false"}[res.OK])
			if expr == "redis@node.unix.p50<40us" && res.ActualText != "no result for target redis from client stack node" {
				t.Errorf("%s: %q", expr, res.ActualText)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", expr, got, want)
		}
	}
}
