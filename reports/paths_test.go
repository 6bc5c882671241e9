package reports

import (
	"bytes"
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
			TransportVerified: true, Evidence: "client addr=[::1]:5000 flags=N", Latency: results.LatencyOf(h), Histogram: enc, ElapsedNs: 50000, Blocks: blocks})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report-paths.md", buf.Bytes())
	if r.Summary[0].Verdict != "" || r.Summary[0].Paths[0].Verdict != "" {
		t.Error("rendering wrote the verdicts into the caller's report")
	}
	var js bytes.Buffer
	if err := Write(&js, "json", r); err != nil || !strings.Contains(js.String(), `"path": "tcp6"`) || !strings.Contains(js.String(), `"verdict": "`) {
		t.Errorf("the JSON has no tcp6 path with its verdict (%v)", err)
	}
}
