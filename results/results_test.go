package results

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
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
		Timing: Timing{Latency: LatencyOf(h), ElapsedNs: int64(len(values)) * 1000}, Histogram: enc, Connection: Connection{TransportVerified: true}}
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
	if s.Side(drivers.TCP).N != 6 || s.Side(drivers.Unix).N != 6 {
		t.Fatalf("pooled N tcp=%d unix=%d, want 6 each", s.Side(drivers.TCP).N, s.Side(drivers.Unix).N)
	}
	if s.Against(drivers.Unix).SpeedupP50 < 1.99 || s.Against(drivers.Unix).SpeedupP50 > 2.01 || s.Against(drivers.Unix).SpeedupMean < 1.99 || s.Against(drivers.Unix).SpeedupMean > 2.01 {
		t.Fatalf("speedup p50=%v mean=%v, want 2", s.Against(drivers.Unix).SpeedupP50, s.Against(drivers.Unix).SpeedupMean)
	}
	if len(s.Warnings) != 0 {
		t.Fatalf("steady rounds got warnings: %v", s.Warnings)
	}
	if s.Side(drivers.TCP).OpsPerSec < 999_999 || s.Side(drivers.TCP).OpsPerSec > 1_000_001 {
		t.Fatalf("ops/s = %v, want 1e6 (6 ops in 6 µs)", s.Side(drivers.TCP).OpsPerSec)
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
	if len(w) != 1 || !strings.Contains(w[0].String(), "1.22× in round 1, 6.89× in round 2") || w[0].Kind != RoundsDiffer || !slices.Contains(w[0].Settings(), setting.Rounds) {
		t.Fatalf("warnings = %q, want one naming each round's speedup", w)
	}
}

// TestRoundsDisagreeOnAFurtherPath: a further path whose speedup moves
// between rounds is warned of by name, as Unix's is, while a path that
// moves with TCP is not.
func TestRoundsDisagreeOnAFurtherPath(t *testing.T) {
	r := &Report{Runs: []Run{
		run(t, "redis", drivers.TCP, 1, 11000), run(t, "redis", drivers.Unix, 1, 9000), run(t, "redis", drivers.TCP6, 1, 11000), run(t, "redis", drivers.TLS, 1, 12000),
		run(t, "redis", drivers.TCP, 2, 11500), run(t, "redis", drivers.Unix, 2, 9400), run(t, "redis", drivers.TCP6, 2, 3000), run(t, "redis", drivers.TLS, 2, 12500),
	}}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	w := r.Summary[0].Warnings
	if len(w) != 1 || !strings.Contains(w[0].String(), "The p50 speedup of TCP6 over TCP differed between rounds (1.00× in round 1, 3.83× in round 2)") {
		t.Fatalf("warnings = %q, want one naming TCP6 and its speedup in each round", w)
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
	for _, field := range []string{`"schema_version": 2`, `"latency_ns"`, `"transport_verified": true`, `"comparisons"`, `"speedup_p50"`, `"baseline": "tcp"`, `"network": "tcp"`} {
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
	if back.Summary[0].Against(drivers.Unix).SpeedupP50 != r.Summary[0].Against(drivers.Unix).SpeedupP50 {
		t.Fatalf("re-summarized speedup %v, want %v", back.Summary[0].Against(drivers.Unix).SpeedupP50, r.Summary[0].Against(drivers.Unix).SpeedupP50)
	}
}

func TestReadJSONRejectsOtherSchema(t *testing.T) {
	if _, err := ReadJSON(strings.NewReader(`{"schema_version": 99}`)); err == nil || !strings.Contains(err.Error(), "schema_version 99") {
		t.Fatalf("got %v", err)
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
	if len(w) != 1 || !strings.Contains(w[0].String(), "TCP latencies have a wide middle") || !strings.Contains(w[0].String(), "bimodal") {
		t.Fatalf("warnings = %q, want one bimodality warning for TCP", w)
	}
}

// TestReadJSONRefusesWhatDbsockNeverWrites: an empty report, a negative
// latency and an interval upside down are refused with a reason.
func TestReadJSONRefusesWhatDbsockNeverWrites(t *testing.T) {
	for _, tt := range []struct{ name, json, want string }{
		{"empty", `{"schema_version":1}`, "no targets and no runs"},
		{"negative", `{"schema_version":1,"targets":[{"target":"x"}],"runs":[{"target":"x","transport":"tcp","round":1,"n":5,"latency_ns":{"p50":-3}}]}`, "runs[0].latency_ns.p50 is -3 ns"},
		{"upside down", `{"schema_version":1,"targets":[{"target":"x"}],"summary":[{"target":"x","scenario":"pk","unix_speedup_p50_ci":{"center":1.2,"lo":1.5,"hi":1.1}}]}`, "is not an interval"},
	} {
		_, err := ReadJSON(strings.NewReader(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestReadJSONBoundsInput: a file larger than any report dbsock writes is
// refused, whatever it holds, without reading it all.
func TestReadJSONBoundsInput(t *testing.T) {
	huge := io.MultiReader(strings.NewReader(`{"schema_version":1,"tool":{"version":"`), endless{})
	_, err := ReadJSON(huge)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("an endless version string: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'v'
	}
	return len(p), nil
}

// TestEveryPathIsFlaggedAndWarned: the noisy blocks and the wide middle
// are looked for on every path of a case, not on TCP and Unix alone: a
// TLS block far from its path's others is flagged and counted, and TLS's
// two modes are warned of.
func TestEveryPathIsFlaggedAndWarned(t *testing.T) {
	var fast, slow []int64
	for range 100 {
		fast, slow = append(fast, 10000), append(slow, 60000)
	}
	r := &Report{Runs: []Run{
		run(t, "redis", drivers.TCP, 1, fast...),
		run(t, "redis", drivers.Unix, 1, fast...),
		run(t, "redis", drivers.TLS, 1, append(fast, slow...)...),
	}}
	for i := range r.Runs {
		for k := range 10 {
			b := Block{Pair: k, Index: k, StartNs: int64(k) * 1e6, N: 10, P50: 10000, Mean: 10000}
			if r.Runs[i].Transport == drivers.TLS && k == 3 {
				b.P50 = 50000
			}
			r.Runs[i].Blocks = append(r.Runs[i].Blocks, b)
		}
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	s := r.Summary[0]
	if s.Blocks != 30 || len(s.NoisyBlocks) != 1 || s.NoisyBlocks[0].Transport != drivers.TLS || s.NoisyBlocks[0].Pair != 3 {
		t.Errorf("%d blocks, noisy %+v; want 30 counted and TLS's fourth flagged", s.Blocks, s.NoisyBlocks)
	}
	if !slices.ContainsFunc(s.Warnings, func(w Warning) bool { return w.Kind == WideMiddle && strings.Contains(w.String(), drivers.TLS.Label()) }) {
		t.Errorf("warnings %q, want TLS's wide middle", s.Warnings)
	}
}
