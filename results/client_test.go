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

// TestOverheadGoal: an agent's timing cost misses its goal above 1% of
// its case's Unix p50, or above 1 µs for C; unknown figures miss nothing.
func TestOverheadGoal(t *testing.T) {
	for _, tc := range []struct {
		lang     string
		ns, unix int64
		over     bool
	}{
		{"python", 70, 30_000, false},
		{"python", 301, 30_000, true},
		{"c", 29, 20_000, false},
		{"c", 1001, 200_000, true},
		{"node", 999, 200_000, false},
		{"php", 0, 30_000, false},
		{"php", 50, 0, false},
	} {
		c := &Client{Language: tc.lang, TimingOverheadNs: tc.ns}
		if tc.lang == "c" {
			c.TimingGoalNs = 1000 // as agents/c/stack.json declares
		}
		if got := c.OverheadOverGoal(tc.unix); got != tc.over {
			t.Errorf("%s %d ns against a Unix p50 of %d ns: over %v, want %v", tc.lang, tc.ns, tc.unix, got, tc.over)
		}
	}
	if (*Client)(nil).OverheadOverGoal(1) {
		t.Error("no client is over its goal")
	}
}
