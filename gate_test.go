package dbsock_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/results"
)

// AtLeast judges the low end of every case's interval, and refuses to pass
// what holds no interval or a least speedup that is not one.
func TestAtLeast(t *testing.T) {
	unix := func(lo, hi float64) []dbsock.Comparison {
		return []dbsock.Comparison{{Path: dbsock.Unix, Baseline: dbsock.TCP, SpeedupP50: (lo + hi) / 2, SpeedupP50CI: &dbsock.Interval{Lo: lo, Hi: hi}}}
	}
	two := &dbsock.Report{Summary: []dbsock.Summary{
		{Case: results.Case{Target: "join", Scenario: "own"}, Comparisons: unix(1.10, 1.30)},
		{Case: results.Case{Target: "join", Scenario: "own", Concurrency: 4}, Comparisons: unix(1.02, 1.20)},
	}}
	noCI := &dbsock.Report{Summary: []dbsock.Summary{{Case: results.Case{Target: "join"}, Comparisons: []dbsock.Comparison{{Path: dbsock.Unix}}}}}
	for _, tt := range []struct {
		name string
		rep  *dbsock.Report
		min  float64
		want string // "" for nil
	}{
		{"every case's low end at least min", two, 1.02, ""},
		{"one case's low end under min", two, 1.05, "join (own, 4 workers, 0 B values): the Unix socket's p50 speedup over TCP is 1.110× (1.020–1.200, 95%): the interval's low end 1.020 is under the least asked, 1.05×"},
		{"no interval", noCI, 1, "join: no interval for the Unix socket's p50 speedup over TCP"},
		{"no case", &dbsock.Report{}, 1, "the report has no case"},
		{"min not a number", two, math.NaN(), "must be a number above 0"},
		{"min 0", two, 0, "must be a number above 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := dbsock.AtLeast(tt.rep, tt.min)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("AtLeast(%g) = %v, want nil", tt.min, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("AtLeast(%g) = %v, want %q", tt.min, err, tt.want)
			}
		})
	}
}
