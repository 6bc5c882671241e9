package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// scaled returns a copy of the fixture with every Unix latency multiplied.
func scaled(t *testing.T, factor float64) *results.Report {
	r := fixture(t)
	for i := range r.Runs {
		if r.Runs[i].Transport != drivers.Unix {
			continue
		}
		h := results.NewHistogram()
		l := r.Runs[i].Latency
		for _, v := range []int64{l.Min, l.P50, l.P90, l.Max} {
			_ = h.RecordValue(int64(float64(v) * factor))
		}
		r.Runs[i].Latency = results.LatencyOf(h)
		for j := range r.Runs[i].Blocks {
			b := &r.Runs[i].Blocks[j]
			b.P50, b.Mean, b.P99 = int64(float64(b.P50)*factor), b.Mean*factor, int64(float64(b.P99)*factor)
		}
		r.Runs[i].Histogram, _ = results.EncodeHistogram(h)
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompareFindsRegression(t *testing.T) {
	old, slower := scaled(t, 1), scaled(t, 1.5)
	changes := results.Changes(old, slower)
	if len(changes) != 6 {
		t.Fatalf("got %d changes, want 2 transports x 3 metrics", len(changes))
	}
	var unixP50 *results.Change
	for i := range changes {
		c := &changes[i]
		if c.Transport == drivers.TCP && c.Delta != 0 {
			t.Errorf("TCP %s changed by %v; it should not have", c.Metric, c.Delta)
		}
		if c.Transport == drivers.Unix && c.Metric == "p50" {
			unixP50 = c
		}
	}
	if unixP50 == nil || unixP50.Delta < 0.45 || unixP50.Delta > 0.55 || !unixP50.Significant {
		t.Fatalf("Unix p50 change %+v, want about +50%% and significant", unixP50)
	}
	if regs := results.Regressions(changes, 0.10); len(regs) == 0 {
		t.Fatal("a 50% slowdown is not reported as a regression beyond 10%")
	}
	if regs := results.Regressions(changes, 0.60); len(regs) != 0 {
		t.Fatalf("a 50%% slowdown reported beyond 60%%: %+v", regs)
	}
	if regs := results.Regressions(results.Changes(old, old), 0); len(regs) != 0 {
		t.Fatalf("a report compared with itself regressed: %+v", regs)
	}
	var buf bytes.Buffer
	if err := CompareMarkdown(&buf, changes); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| redis | pk, 6 B values | Unix | p50 |") || !strings.Contains(buf.String(), "**yes**") {
		t.Fatalf("markdown:\n%s", buf.String())
	}
}

func TestWorkloadDiffers(t *testing.T) {
	a := &results.Report{Config: results.Config{Workload: &results.Workload{Rows: 10000, Keys: "uniform", Op: "read"}}}
	b := &results.Report{Config: results.Config{Workload: &results.Workload{Rows: 10000, Keys: "zipf", Theta: 0.99, Op: "read"}}}
	old := &results.Report{}
	if WorkloadDiffers(a, a) != "" {
		t.Error("a report differs from itself")
	}
	if got := WorkloadDiffers(a, b); !strings.Contains(got, "uniform") || !strings.Contains(got, "zipf keys (theta 0.99)") {
		t.Errorf("got %q", got)
	}
	if got := WorkloadDiffers(old, a); !strings.Contains(got, "one row") {
		t.Errorf("got %q", got)
	}
}

func TestMethodNamesTheWorkload(t *testing.T) {
	w := &results.Workload{Rows: 1000000, Keys: "zipf", Theta: 0.99, Op: "read"}
	if got := workloadPhrase(w); !strings.Contains(got, "1,000,000 seeded rows") || !strings.Contains(got, "theta 0.99") {
		t.Errorf("got %q", got)
	}
	if got := workloadPhrase(&results.Workload{Rows: 1, Keys: "uniform", Op: "read"}); !strings.Contains(got, "same single row") {
		t.Errorf("got %q", got)
	}
}

// TestSpeedupComparedByInterval: two reports' Unix speedups differ when
// their intervals lie apart, not when they overlap.
func TestSpeedupComparedByInterval(t *testing.T) {
	c := results.Case{Target: "redis", Scenario: "pk", Concurrency: 1}
	rep := func(lo, hi float64) *results.Report {
		return &results.Report{Summary: []results.Summary{{Case: c, Comparisons: []results.Comparison{{Path: drivers.Unix, Baseline: drivers.TCP,
			SpeedupP50: (lo + hi) / 2, SpeedupP50CI: &results.Interval{Center: (lo + hi) / 2, Lo: lo, Hi: hi}}}}}}
	}
	for _, tt := range []struct {
		old, new *results.Report
		want     string
	}{
		{rep(1.30, 1.40), rep(1.10, 1.20), "**apart: the speedup changed**"},
		{rep(1.30, 1.40), rep(1.35, 1.45), "overlap: no change shown"},
	} {
		var b strings.Builder
		if err := SpeedupMarkdown(&b, tt.old, tt.new); err != nil || !strings.Contains(b.String(), "| redis | pk, 0 B values | 1.350× (1.300–1.400) |") || !strings.Contains(b.String(), tt.want) {
			t.Errorf("got %q, want %q (%v)", b.String(), tt.want, err)
		}
	}
	var b strings.Builder
	if err := SpeedupMarkdown(&b, rep(1, 2), &results.Report{}); err != nil || b.Len() != 0 {
		t.Errorf("no shared case: %q", b.String())
	}
}

// TestRunsDifferNamesWhatMovesLatency: placement, CPU count and a
// target's server are named; identical runs differ in nothing.
func TestRunsDifferNamesWhatMovesLatency(t *testing.T) {
	a := &results.Report{Config: results.Config{Provider: "local", Placement: results.Placement{Mode: "same", ClientCPUs: "0", ServerCPUs: "0"}},
		Environment: results.Environment{CPUModel: "X", NumCPU: 2}, Targets: []results.Target{{Name: "redis", Server: drivers.ServerInfo{Product: "Redis", Version: "7.0.15"}}}}
	if d := RunsDiffer(a, a); d != nil {
		t.Fatalf("a run against itself differs: %q", d)
	}
	b := *a
	b.Config.Placement = results.Placement{Mode: "split", ClientCPUs: "0", ServerCPUs: "1"}
	b.Environment.NumCPU = 4
	b.Targets = []results.Target{{Name: "redis", Server: drivers.ServerInfo{Product: "Redis", Version: "7.2.4"}}}
	got := strings.Join(RunsDiffer(a, &b), "; ")
	for _, want := range []string{"placement same (client CPU 0, servers CPU 0) against split (client CPU 0, servers CPU 1)", "logical CPUs 2 against 4", "redis's server Redis 7.0.15 against Redis 7.2.4"} {
		if !strings.Contains(got, want) {
			t.Errorf("differences %q do not say %q", got, want)
		}
	}
}
