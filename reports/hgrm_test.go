package reports

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestHgrmKnownValues: 1..1000 µs once each; the .hgrm must give the
// percentiles, mean, standard deviation, max and count of that set (in µs,
// to the histogram's 0.1% precision).
func TestHgrmKnownValues(t *testing.T) {
	h := results.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 1000)
	}
	enc, err := results.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Report{Targets: []results.Target{{Name: "redis"}}}
	for _, tr := range drivers.Transports {
		r.Runs = append(r.Runs, results.Run{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 1, ValueSize: 6},
			Transport: tr, Round: 1, N: 1000, Timing: results.Timing{Latency: results.LatencyOf(h)}, Histogram: enc})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	files, err := Hgrm(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files["redis-tcp.hgrm"] == nil || files["redis-unix.hgrm"] == nil {
		t.Fatalf("files %v, want redis-tcp.hgrm and redis-unix.hgrm", keys(files))
	}
	text := string(files["redis-tcp.hgrm"])
	if !strings.HasPrefix(text, " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n") {
		t.Fatalf("header: %q", text[:60])
	}
	type row struct{ value, percentile float64 }
	var rows []row
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] != "Value" {
			v, _ := strconv.ParseFloat(f[0], 64)
			p, _ := strconv.ParseFloat(f[1], 64)
			rows = append(rows, row{v, p})
		}
	}
	// At the first listed percentile at or above p, the value is that
	// share of 1..1000 µs.
	for _, p := range []float64{0.5, 0.75, 0.9, 0.99, 1} {
		for _, r := range rows {
			if r.percentile >= p {
				if want := 1000 * r.percentile; r.value < want*0.998-1 || r.value > want*1.002+1 {
					t.Errorf("percentile %v: %v µs, want %v", r.percentile, r.value, want)
				}
				break
			}
		}
	}
	if len(rows) < 20 || rows[len(rows)-1].percentile != 1 {
		t.Fatalf("%d rows, last %+v; want the distribution up to 100%%", len(rows), rows[len(rows)-1])
	}
	for _, want := range []string{"#[Mean    =      500.", "StdDeviation   =      288.", "#[Max     =     1000.", "Total count    =         1000]"} {
		if !strings.Contains(text, want) {
			t.Errorf("footer lacks %q:\n%s", want, text[strings.Index(text, "#[Mean"):])
		}
	}
}

// TestHgrmEveryPath: each path of a case has its file, a further one
// (TCP6) as TCP and Unix do.
func TestHgrmEveryPath(t *testing.T) {
	h := results.NewHistogram()
	_ = h.RecordValue(1000)
	enc, err := results.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Report{Targets: []results.Target{{Name: "redis"}}}
	for _, tr := range []drivers.Transport{drivers.TCP, drivers.Unix, drivers.TCP6} {
		r.Runs = append(r.Runs, results.Run{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 1, ValueSize: 6},
			Transport: tr, Round: 1, N: 1, Timing: results.Timing{Latency: results.LatencyOf(h)}, Histogram: enc})
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	files, err := Hgrm(r)
	if err != nil || len(files) != 3 || files["redis-tcp6.hgrm"] == nil {
		t.Fatalf("files %v (%v), want redis-tcp.hgrm, redis-unix.hgrm and redis-tcp6.hgrm", keys(files), err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var _ = bytes.MinRead
