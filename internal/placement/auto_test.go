package placement

import (
	"fmt"
	"strings"
	"testing"
)

// TestChooseBoth: auto at rest measures shared and split on two CPUs or
// more (split on two physical cores, shared on the split's client CPU),
// and Choose's one placement on one CPU.
func TestChooseBoth(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus []CPU
		want [][2]int // client, server CPU per placement
	}{
		{"one CPU", []CPU{{ID: 0}}, [][2]int{{0, 0}}},
		{"two CPUs", []CPU{{ID: 0}, {ID: 1, Core: 1}}, [][2]int{{0, 0}, {0, 1}}},
		{"two SMT siblings", []CPU{{ID: 0}, {ID: 1}}, [][2]int{{0, 0}, {0, 1}}},
		{"four CPUs, two cores with SMT", []CPU{{ID: 0}, {ID: 1, Core: 1}, {ID: 2}, {ID: 3, Core: 1}}, [][2]int{{0, 0}, {0, 1}}},
		{"eight cores", []CPU{{ID: 0}, {ID: 1, Core: 1}, {ID: 2, Core: 2}, {ID: 3, Core: 3}, {ID: 4, Core: 4}, {ID: 5, Core: 5}, {ID: 6, Core: 6}, {ID: 7, Core: 7}}, [][2]int{{1, 1}, {1, 2}}},
	} {
		ps, err := ChooseBoth(tc.cpus)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got [][2]int
		for _, p := range ps {
			got = append(got, [2]int{p.Client[0], p.Server[0]})
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: placements %v, want %v", tc.name, got, tc.want)
		}
		if len(ps) == 2 && (ps[0].Mode != "same" || ps[1].Mode != "split" || !strings.Contains(ps[0].Reason, "auto")) {
			t.Errorf("%s: modes %q, %q, reason %q", tc.name, ps[0].Mode, ps[1].Mode, ps[0].Reason)
		}
	}
}
