package reports

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestAThirdPathAddsItsTable: a run over tcp, tcp6 and unix reads as the
// two-path report does, with the further path's table under the headline
// and a method that names every path (golden file), and renders nothing
// into the report it was given.
func TestAThirdPathAddsItsTable(t *testing.T) {
	r := fixture(t)
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.TCP6, drivers.Unix}
	for round, values := range map[int][]int64{1: {9800, 10700, 11800, 29000}, 2: {9900, 10600, 11900, 30000}} {
		h := results.NewHistogram()
		var blocks []results.Block
		for i, v := range values {
			_ = h.RecordValue(v)
			blocks = append(blocks, results.Block{Pair: i, Index: 3*i + 1, N: 1, P50: v, Mean: float64(v), P99: v})
		}
		enc, err := results.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		r.Runs = append(r.Runs, results.Run{Case: r.Runs[0].Case, Transport: drivers.TCP6, Round: round, N: int64(len(values)),
			Connection: results.Connection{TransportVerified: true, Evidence: "client addr=[::1]:5000 flags=N"}, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 50000}, Histogram: enc, Blocks: blocks})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report-paths.md", buf.Bytes())
	if r.Summary[0].Against(drivers.Unix).Verdict != "" || furtherPaths(&r.Summary[0])[0].Verdict != "" {
		t.Error("rendering wrote the verdicts into the caller's report")
	}
	var js bytes.Buffer
	if err := Write(&js, "json", r); err != nil || !strings.Contains(js.String(), `"path": "tcp6"`) || !strings.Contains(js.String(), `"verdict": "`) {
		t.Errorf("the JSON has no tcp6 path with its verdict (%v)", err)
	}
}

// TestBaselineNamesItself: a run whose baseline is not TCP (--baseline
// tcp6 here) compares every other path with it, and the report says so:
// the title, the headline's column, the paths table (TCP among its rows),
// the verdicts' ratios and the JSON's comparisons.
func TestBaselineNamesItself(t *testing.T) {
	r := fixture(t)
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.TCP6, drivers.Unix}
	r.Config.Baseline = drivers.TCP6
	for round, values := range map[int][]int64{1: {9800, 10700, 11800, 29000}, 2: {9900, 10600, 11900, 30000}} {
		h := results.NewHistogram()
		var blocks []results.Block
		for i, v := range values {
			_ = h.RecordValue(v)
			blocks = append(blocks, results.Block{Pair: i, Index: 3*i + 1, N: 1, P50: v, Mean: float64(v), P99: v})
		}
		enc, err := results.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		r.Runs = append(r.Runs, results.Run{Case: r.Runs[0].Case, Transport: drivers.TCP6, Round: round, N: int64(len(values)),
			Connection: results.Connection{TransportVerified: true}, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 50000}, Histogram: enc, Blocks: blocks})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	s := r.Summary[0]
	if len(s.Comparisons) != 2 || s.ComparisonOf(drivers.TCP) == nil || s.ComparisonOf(drivers.Unix) == nil || s.ComparisonOf(drivers.TCP6) != nil {
		t.Fatalf("comparisons %+v, want tcp and unix against tcp6", s.Comparisons)
	}
	var md, js bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Unix domain socket vs TCP6 ([::1])", "| target | server | TCP6 p50 | Unix p50 |", "each compared with TCP6 ([::1])",
		"| TCP6 p50 | path p50 |", "| TCP |", "| TCP6 ([::1]) | 8 |", "TCP6/Unix", "**TCP against TCP6: ", "| redis | Redis 7.0.15 | 10.7 µs | 7.5 µs |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := Write(&js, "json", r); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("DUMP") != "" {
		t.Log(md.String())
	}
	if strings.Count(js.String(), `"baseline": "tcp6"`) != 3 { // config and both comparisons
		t.Errorf("the JSON does not name tcp6 as the baseline of both comparisons and the run:\n%s", js.String())
	}
}

// TestControlIsLabelled: an A/A control (tcp2, the route of tcp again) is
// labelled a control in every table, the report says what it is, and a
// winner named on it is called noise.
func TestControlIsLabelled(t *testing.T) {
	r := fixture(t)
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.TCP2, drivers.Unix}
	for round := 1; round <= 2; round++ {
		h := results.NewHistogram()
		var blocks []results.Block
		for i := range 4 {
			v := int64(5000 + 10*i) // far below TCP's: a winner, as noise would name one
			_ = h.RecordValue(v)
			blocks = append(blocks, results.Block{Pair: i, Index: 3*i + 2, N: 1, P50: v, Mean: float64(v), P99: v})
		}
		enc, err := results.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		r.Runs = append(r.Runs, results.Run{Case: r.Runs[0].Case, Transport: drivers.TCP2, Round: round, N: 4,
			Connection: results.Connection{TransportVerified: true, Evidence: "client addr=127.0.0.1:5001 flags=N"}, Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 50000}, Histogram: enc, Blocks: blocks})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	c := r.Summary[0].ComparisonOf(drivers.TCP2)
	if c == nil || !c.VerdictKind.Winner() {
		t.Fatalf("the fixture's tcp2 comparison names no winner (%+v): the test needs one", c)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"| TCP2 (127.0.0.1 again): A/A control |",
		"(noise: an A/A control)",
		"TCP2 (127.0.0.1 again) is an A/A control: the route of 127.0.0.1 TCP again",
		"127.0.0.1 TCP again on connections of its own (an A/A control)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}
