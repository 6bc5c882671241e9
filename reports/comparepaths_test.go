package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// withTLS is the fixture with a tls path beside TCP and the socket: each
// Unix run copied as a tls run whose latencies are factor times Unix's.
func withTLS(t *testing.T, factor float64) *results.Report {
	r := fixture(t)
	var extra []results.Run
	for _, run := range r.Runs {
		if run.Transport != drivers.Unix {
			continue
		}
		run.Transport = drivers.TLS
		h := results.NewHistogram()
		l := run.Latency
		for _, v := range []int64{l.Min, l.P50, l.P90, l.Max} {
			_ = h.RecordValue(int64(float64(v) * factor))
		}
		run.Latency = results.LatencyOf(h)
		run.Histogram, _ = results.EncodeHistogram(h)
		run.Blocks = append([]results.Block(nil), run.Blocks...)
		for j := range run.Blocks {
			b := &run.Blocks[j]
			b.P50, b.Mean, b.P99 = int64(float64(b.P50)*factor), b.Mean*factor, int64(float64(b.P99)*factor)
		}
		extra = append(extra, run)
	}
	r.Runs = append(r.Runs, extra...)
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.TLS, drivers.Unix}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCompareSeesEveryPath: a significant slowdown that only a further
// path shows is a regression that names that path (compare once looked
// at TCP and the socket alone).
func TestCompareSeesEveryPath(t *testing.T) {
	old, slower := withTLS(t, 1), withTLS(t, 1.5)
	if len(slower.Summary) == 0 || len(furtherPaths(&slower.Summary[0])) != 1 {
		t.Fatalf("the fixture has no tls path in its summary: %+v", slower.Summary)
	}
	changes := results.Changes(old, slower)
	if len(changes) != 9 {
		t.Fatalf("%d changes, want 3 paths x 3 metrics", len(changes))
	}
	regs := results.Regressions(changes, 0.10)
	if len(regs) == 0 {
		t.Fatal("a 50% slowdown on the tls path alone is no regression")
	}
	for _, r := range regs {
		if r.Transport != drivers.TLS {
			t.Errorf("%s %s regressed; only tls was slowed", r.Transport, r.Metric)
		}
	}
	// A path only the new report measured is no change.
	if n := len(results.Changes(fixture(t), slower)); n != 6 {
		t.Errorf("%d changes against a report without tls, want 6", n)
	}
}

// TestRoundsNameEveryPath: the p50 by round line gives each path its own
// figure (it once kept two slots, TCP and "the other", and a third path's
// p50 took the socket's place).
func TestRoundsNameEveryPath(t *testing.T) {
	r := withTLS(t, 3)
	var b strings.Builder
	sum := &r.Summary[0]
	writeRounds(&b, r, sum, pickUnit(1000, 1000))
	got := b.String()
	for _, run := range r.Runs {
		if run.Case != sum.Case || run.Round != 1 || run.Transport == drivers.TCP {
			continue
		}
		want := run.Transport.Label() + " " + pickUnit(1000, 1000).fmt(float64(run.Latency.P50))
		if !strings.Contains(got, want) {
			t.Errorf("rounds line lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "round 1 TCP ") || strings.Count(got, " / ") != 2*len(r.Config.Paths)-2 {
		t.Errorf("rounds line does not give three paths per round:\n%s", got)
	}
}
