package results

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// run builds a run whose histogram holds n copies of each value.
func run(t *testing.T, target string, tr drivers.Transport, round int, values ...int64) Run {
	t.Helper()
	h := NewHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return Run{Case: Case{Target: target, Scenario: "pk", Concurrency: 1, ValueSize: 6}, Transport: tr, Round: round, N: int64(len(values)),
		Latency: LatencyOf(h), Histogram: enc, ElapsedNs: int64(len(values)) * 1000, TransportVerified: true}
}

func TestSummarizePoolsRoundsAndComputesSpeedup(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Runs: []Run{
		run(t, "redis", drivers.TCP, 1, 20000, 20000, 20000),
		run(t, "redis", drivers.Unix, 1, 10000, 10000, 10000),
		run(t, "redis", drivers.Unix, 2, 10000, 10000, 10000),
		run(t, "redis", drivers.TCP, 2, 20000, 20000, 20000),
	}}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	if len(r.Summary) != 1 {
		t.Fatalf("got %d summaries, want 1", len(r.Summary))
	}
	s := r.Summary[0]
	if s.TCP.N != 6 || s.Unix.N != 6 {
		t.Fatalf("pooled N tcp=%d unix=%d, want 6 each", s.TCP.N, s.Unix.N)
	}
	if s.UnixSpeedupP50 < 1.99 || s.UnixSpeedupP50 > 2.01 || s.UnixSpeedupMean < 1.99 || s.UnixSpeedupMean > 2.01 {
		t.Fatalf("speedup p50=%v mean=%v, want 2", s.UnixSpeedupP50, s.UnixSpeedupMean)
	}
	if len(s.Warnings) != 0 {
		t.Fatalf("steady rounds got warnings: %v", s.Warnings)
	}
	if s.TCP.OpsPerSec < 999_999 || s.TCP.OpsPerSec > 1_000_001 {
		t.Fatalf("ops/s = %v, want 1e6 (6 ops in 6 µs)", s.TCP.OpsPerSec)
	}
}

func TestSummarizeWarnsWhenRoundsDisagree(t *testing.T) {
	r := &Report{Runs: []Run{
		run(t, "redis", drivers.TCP, 1, 11000),
		run(t, "redis", drivers.Unix, 1, 9000),
		run(t, "redis", drivers.Unix, 2, 9000),
		run(t, "redis", drivers.TCP, 2, 62000),
	}}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	w := r.Summary[0].Warnings
	if len(w) != 1 || !strings.Contains(w[0], "TCP p50") || !strings.Contains(w[0], "--placement") {
		t.Fatalf("warnings = %q, want one about TCP suggesting --placement", w)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Runs: []Run{run(t, "echo", drivers.TCP, 1, 5000), run(t, "echo", drivers.Unix, 1, 4000)}}
	r.Runs[0].Endpoint = drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1", User: "u", Password: "secret"}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "secret") {
		t.Fatal("the JSON contains the password")
	}
	for _, field := range []string{`"schema_version": 1`, `"latency_ns"`, `"transport_verified": true`, `"unix_speedup_p50"`, `"network": "tcp"`} {
		if !strings.Contains(buf.String(), field) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Summarize(); err != nil {
		t.Fatal(err)
	}
	if back.Summary[0].UnixSpeedupP50 != r.Summary[0].UnixSpeedupP50 {
		t.Fatalf("re-summarized speedup %v, want %v", back.Summary[0].UnixSpeedupP50, r.Summary[0].UnixSpeedupP50)
	}
}

func TestReadJSONRejectsOtherSchema(t *testing.T) {
	if _, err := ReadJSON(strings.NewReader(`{"schema_version": 99}`)); err == nil || !strings.Contains(err.Error(), "schema_version 99") {
		t.Fatalf("got %v", err)
	}
}

func TestVerdicts(t *testing.T) {
	mk := func(pairs ...[2]int64) *Report {
		r := &Report{}
		for i, p := range pairs {
			r.Runs = append(r.Runs, run(t, "x", drivers.TCP, i+1, p[0]), run(t, "x", drivers.Unix, i+1, p[1]))
		}
		if err := r.Summarize(); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name  string
		pairs [][2]int64
		want  string
	}{
		{"unix clearly faster", [][2]int64{{12000, 10000}, {12100, 10000}, {11900, 10000}}, VerdictUnixFaster},
		{"tcp clearly faster", [][2]int64{{9000, 10000}, {9100, 10000}, {8900, 10000}}, VerdictTCPFaster},
		{"noise around one", [][2]int64{{12000, 10000}, {8000, 10000}, {10500, 10000}}, VerdictNoDifference},
		{"one round", [][2]int64{{12000, 10000}}, VerdictNeedsMoreRuns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mk(tt.pairs...).Summary[0]
			if s.Verdict != tt.want {
				t.Fatalf("verdict %q, want %q (ci %+v)", s.Verdict, tt.want, s.UnixSpeedupP50CI)
			}
			if tt.want != VerdictNeedsMoreRuns && (s.UnixSpeedupP50CI.Lo > s.UnixSpeedupP50CI.Center || s.UnixSpeedupP50CI.Hi < s.UnixSpeedupP50CI.Center) {
				t.Fatalf("interval %+v does not contain its center", s.UnixSpeedupP50CI)
			}
		})
	}
}

func TestSummarizeWarnsOnBimodalDistribution(t *testing.T) {
	var fast, slow []int64
	for i := 0; i < 100; i++ {
		fast = append(fast, 10000)
		slow = append(slow, 60000)
	}
	r := &Report{Runs: []Run{
		run(t, "redis", drivers.TCP, 1, append(fast, slow...)...),
		run(t, "redis", drivers.Unix, 1, fast...),
	}}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	w := r.Summary[0].Warnings
	if len(w) != 1 || !strings.Contains(w[0], "TCP latencies have a wide middle") || !strings.Contains(w[0], "bimodal") {
		t.Fatalf("warnings = %q, want one bimodality warning for TCP", w)
	}
}
