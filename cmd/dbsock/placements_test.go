package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/testutil"
)

// TestDefaultPlacesSharedAndSplit: a run at rest on two CPUs or more
// with no placement named measures every case placed shared and placed
// split, a verdict each, and its report says how it placed them.
func TestDefaultPlacesSharedAndSplit(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	if cpus, err := placement.Available(); err != nil || len(cpus) < 2 {
		t.Skipf("needs two CPUs (this process may use %v, %v)", cpus, err)
	}
	code, stdout, stderr := dbsockAsGiven(t, "run", "redis", "--provider", "local", "--n", "200", "--warmup", "10", "--instances", "3", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Config struct {
			Placements []struct {
				Mode   string `json:"mode"`
				Reason string `json:"reason"`
			} `json:"placements"`
		} `json:"config"`
		Summary []struct {
			Placement   string `json:"placement"`
			Comparisons []struct {
				Verdict string `json:"verdict"`
			} `json:"comparisons"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var modes, cases []string
	for _, p := range rep.Config.Placements {
		modes = append(modes, p.Mode)
		if !strings.HasPrefix(p.Reason, "auto: ") {
			t.Errorf("placement %s: reason %q does not say auto chose it", p.Mode, p.Reason)
		}
	}
	for _, s := range rep.Summary {
		cases = append(cases, s.Placement)
		if len(s.Comparisons) == 0 || s.Comparisons[0].Verdict == "" {
			t.Errorf("the case placed %s has no verdict", s.Placement)
		}
	}
	if !slices.Equal(modes, []string{"same", "split"}) || !slices.Equal(cases, []string{"same", "split"}) {
		t.Errorf("placements %v, cases placed %v: want same (shared) and split", modes, cases)
	}
}
