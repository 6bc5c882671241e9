package results

import "testing"

// TestDisbelievedCaseHasNoFigures: when an audit refused one run of a
// case (the Unix run of round 2 here), every run of that case loses its
// measurements, so that no speedup, latency or block of it is shown; the
// other target's case keeps its figures.
func TestDisbelievedCaseHasNoFigures(t *testing.T) {
	refused := blockRuns(t, "redis", 2, ratios(repeat(5, 10)...)...)
	refused[1].Incomplete, refused[1].Error, refused[1].Disbelieved = true, "the server did not see what the agent reported", true
	r := summarize(t, blockRuns(t, "redis", 1, ratios(repeat(5, 10)...)...), refused, blockRuns(t, "mysql", 1, ratios(repeat(1.2, 10)...)...))
	for _, s := range r.Summary {
		for _, c := range s.Comparisons {
			switch {
			case s.Target == "redis" && c.SpeedupP50 != 0:
				t.Errorf("the refused case still gives a speedup of %v", c.SpeedupP50)
			case s.Target == "mysql" && (c.SpeedupP50 < 1.19 || c.SpeedupP50 > 1.21):
				t.Errorf("the other case's speedup is %v, want 1.2", c.SpeedupP50)
			}
		}
	}
	for _, run := range r.Runs {
		if run.Target != "redis" {
			continue
		}
		if !run.Disbelieved || !run.Incomplete || run.Error == "" || len(run.Blocks) != 0 || run.Latency.P50 != 0 || run.Histogram != "" {
			t.Errorf("a run of the refused case keeps its figures: %+v", run)
		}
	}
}
