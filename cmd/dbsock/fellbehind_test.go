package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestGeneratorFellBehind: at a rate this machine cannot offer one
// connection (200,000 lookups a second), the case's verdict is that the
// generator fell behind, with the rate it reached, and no path wins; the
// run exits 0 (it measured what it could), as docs/method.md says, and
// the JSON has the generator's figures for each side.
func TestGeneratorFellBehind(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	dir := t.TempDir()
	md, js := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.json")
	code, _, stderr := dbsock(t, "run", "redis", "--provider", "local", "--rate", "200000", "--n", "1000", "--warmup", "10",
		"--instances", "1", "-o", md, "-o", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Summary []struct {
			Sides []struct {
				Path      string `json:"path"`
				Generator *struct {
					OfferedRate  float64 `json:"offered_rate"`
					AchievedRate float64 `json:"achieved_rate"`
					LagP99Ns     int64   `json:"lag_p99_ns"`
					FellBehind   bool    `json:"fell_behind"`
				} `json:"generator"`
			} `json:"sides"`
			Comparisons []struct {
				VerdictKind string `json:"verdict_kind"`
			} `json:"comparisons"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Summary) != 1 {
		t.Fatalf("%v: %d cases", err, len(rep.Summary))
	}
	s := rep.Summary[0]
	if len(s.Comparisons) != 1 || s.Comparisons[0].VerdictKind != "fell_behind" {
		t.Errorf("comparisons %+v, want the verdict fell_behind", s.Comparisons)
	}
	behind := 0
	for _, side := range s.Sides {
		g := side.Generator
		if g == nil || g.OfferedRate != 200000 || g.AchievedRate <= 0 || g.LagP99Ns <= 0 {
			t.Errorf("%s: generator %+v", side.Path, g)
			continue
		}
		if g.FellBehind {
			behind++
			if g.AchievedRate >= 0.99*200000 && g.LagP99Ns <= 1e6 {
				t.Errorf("%s: fell behind at %+v, within both bounds", side.Path, g)
			}
		}
	}
	if behind == 0 {
		t.Errorf("no side fell behind: %+v", s.Sides)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(string(b), "## Details", 2)[0]
	if !strings.Contains(head, "| 200,000/s |") || !strings.Contains(head, " (behind)") ||
		!strings.Contains(head, "| the generator fell behind: no winner at this rate |") || strings.Contains(head, "better") {
		t.Errorf("headline:\n%s", head)
	}
	if !strings.Contains(string(b), "the generator fell behind: it reached ") || !strings.Contains(string(b), "of 200,000 ops/s offered; no winner at this rate") {
		t.Errorf("no verdict in the details that says the rate reached:\n%s", b)
	}
}
