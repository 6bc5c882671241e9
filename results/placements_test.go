package results

import (
	"strings"
	"testing"
)

// placedRuns are blockRuns of target whose case was measured under
// placement mode, its 20 block pairs each of TCP/Unix ratio r.
func placedRuns(t *testing.T, target, mode string, r float64) []Run {
	runs := blockRuns(t, target, 1, ratios(repeat(r, 20)...)...)
	for i := range runs {
		runs[i].Placement = mode
	}
	return runs
}

// TestPlacementsThatDisagreeAreSaid: a case whose verdict under one
// placement is "TCP faster" and under the other "Unix faster" (a
// placement-sensitive server, faked) carries a warning on both rows that
// gives each placement's verdict and says why it matters; cases whose
// placements agree, or a verdict that names no winner, carry none.
func TestPlacementsThatDisagreeAreSaid(t *testing.T) {
	r := &Report{}
	r.Config.Placements = []Placement{{Mode: "same", ClientCPUs: "0", ServerCPUs: "0"}, {Mode: "split", ClientCPUs: "0", ServerCPUs: "1"}}
	for _, rs := range [][]Run{placedRuns(t, "mysql", "same", 0.7), placedRuns(t, "mysql", "split", 1.3),
		placedRuns(t, "redis", "same", 1.3), placedRuns(t, "redis", "split", 1.2)} {
		r.Runs = append(r.Runs, rs...)
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	if len(r.Summary) != 4 {
		t.Fatalf("%d cases, want one per target and placement", len(r.Summary))
	}
	for _, s := range r.Summary {
		var said []string
		for _, w := range s.Warnings {
			if w.Kind == PlacementsDisagree {
				said = append(said, w.String())
			}
		}
		switch {
		case s.Target == "redis" && len(said) > 0:
			t.Errorf("redis placed %s: its placements agree, yet: %v", s.Placement, said)
		case s.Target == "mysql" && len(said) != 1:
			t.Errorf("mysql placed %s: %d placement warnings, want 1", s.Placement, len(said))
		case s.Target == "mysql":
			for _, want := range []string{"The placements give mysql over unix different answers", "placed shared (client CPU 0, servers CPU 0): TCP faster, 0.70×",
				"placed split (client CPU 0, servers CPU 1): the socket faster, 1.30×", "where your application and its database run"} {
				if !strings.Contains(said[0], want) {
					t.Errorf("mysql placed %s: %q lacks %q", s.Placement, said[0], want)
				}
			}
		}
	}
}
