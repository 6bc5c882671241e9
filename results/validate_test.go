package results

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// edited is testdata report file with edit applied to its JSON as maps.
func edited(t *testing.T, file string, edit func(r map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	edit(r)
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	v2File = "../reports/testdata/report-apart.json"
	v1File = "../reports/testdata/v1-two.json"
)

func summary0(r map[string]any) map[string]any {
	return r["summary"].([]any)[0].(map[string]any)
}

func comparison0(r map[string]any) map[string]any {
	return summary0(r)["comparisons"].([]any)[0].(map[string]any)
}

// refused fails unless ReadJSON refuses doc with an error holding want.
func refused(t *testing.T, name, doc, want string) {
	t.Helper()
	_, err := ReadJSON(strings.NewReader(doc))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want an error with %q", name, err, want)
	}
}

// TestReadJSONRefusesValuesNoRunProduces: a speedup of 1.8e308 (which
// made the chart spin for ever), a latency past what a histogram records,
// a p-value above 1 are refused, naming the field as the file names it
// (schema 1 and 2); the widest values a run can produce are read.
func TestReadJSONRefusesValuesNoRunProduces(t *testing.T) {
	refused(t, "v2 speedup", edited(t, v2File, func(r map[string]any) {
		comparison0(r)["speedup_p50"] = math.MaxFloat64
		delete(comparison0(r), "speedup_p50_ci")
	}), "summary[0].comparisons[0].speedup_p50 is 1.7976931348623157e+308, outside what a ratio of two latencies can be")
	refused(t, "v2 interval", edited(t, v2File, func(r map[string]any) {
		comparison0(r)["speedup_mean_ci"].(map[string]any)["hi"] = 1e300
	}), "summary[0].comparisons[0].speedup_mean_ci.hi is 1e+300")
	refused(t, "v1 speedup", edited(t, v1File, func(r map[string]any) {
		summary0(r)["unix_speedup_p50"] = math.MaxFloat64
	}), "summary[0].unix_speedup_p50 is 1.7976931348623157e+308")
	refused(t, "v1 side latency", edited(t, v1File, func(r map[string]any) {
		summary0(r)["tcp"].(map[string]any)["latency_ns"].(map[string]any)["p99"] = 1e15
	}), "summary[0].tcp.latency_ns.p99 is 1e+15 ns, outside what a run can record")
	refused(t, "run latency", edited(t, v2File, func(r map[string]any) {
		r["runs"].([]any)[1].(map[string]any)["latency_ns"].(map[string]any)["max"] = int64(math.MaxInt64)
	}), "runs[1].latency_ns.max is 9.223372036854776e+18 ns")
	refused(t, "p-value", edited(t, v2File, func(r map[string]any) {
		comparison0(r)["p_value"] = 2
	}), "summary[0].comparisons[0].p_value is 2, outside what a run can produce (0 to 1)")
	refused(t, "tail", edited(t, v2File, func(r map[string]any) {
		comparison0(r)["tail"] = map[string]any{"ratio": 1e300, "verdict_kind": "unix_faster"}
	}), "summary[0].comparisons[0].tail.ratio is 1e+300")
	refused(t, "concurrency", edited(t, v2File, func(r map[string]any) {
		summary0(r)["concurrency"] = 1 << 40
	}), "summary[0].concurrency is 1.099511627776e+12")
	for _, v := range []float64{maxSpeedup / (1 + 1e-9), 1 / maxSpeedup} {
		doc := edited(t, v1File, func(r map[string]any) { // (a version 2 file's verdict must agree with its interval)
			c := summary0(r)
			c["unix_speedup_p50"], c["unix_speedup_mean"] = v, v
			c["unix_speedup_p50_ci"] = map[string]any{"center": v, "lo": v, "hi": v, "confidence": 0.95}
		})
		if _, err := ReadJSON(strings.NewReader(doc)); err != nil {
			t.Errorf("a speedup of %g, which two recorded latencies can give, is refused: %v", v, err)
		}
	}
}

// TestReadJSONRefusesComparisonsOfSidesItLacks: a case whose comparison
// names a baseline or a path it has no side for, that has no sides, that
// has a path twice, or two baselines, is refused with the field.
func TestReadJSONRefusesComparisonsOfSidesItLacks(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(r map[string]any)
		want string
	}{
		{"baseline without its side", func(r map[string]any) { comparison0(r)["baseline"] = "tls" },
			`summary[0].comparisons[0].baseline is "tls", a path the case has no side for (its sides: tcp, unix)`},
		{"path without its side", func(r map[string]any) { comparison0(r)["path"] = "tcp6" },
			`summary[0].comparisons[0].path is "tcp6", a path the case has no side for`},
		{"no sides", func(r map[string]any) { summary0(r)["sides"] = []any{} },
			`summary[0].sides is empty`},
		{"no sides, no comparisons", func(r map[string]any) { summary0(r)["sides"], summary0(r)["comparisons"] = []any{}, []any{} },
			`summary[0].sides is empty`},
		{"a side twice", func(r map[string]any) {
			s := summary0(r)["sides"].([]any)
			summary0(r)["sides"] = append(s, s[1])
		}, `summary[0].sides[2].path is "unix", a path the case already has a side for`},
		{"a comparison twice", func(r map[string]any) {
			c := summary0(r)["comparisons"].([]any)
			summary0(r)["comparisons"] = append(c, c[0])
		}, `summary[0].comparisons[1].path is "unix", a path the case already compares`},
		{"its own baseline", func(r map[string]any) { comparison0(r)["baseline"] = "unix" },
			`summary[0].comparisons[0].path is "unix", its own baseline`},
		{"not a path", func(r map[string]any) {
			summary0(r)["sides"].([]any)[1].(map[string]any)["path"] = "carrier-pigeon"
		}, `summary[0].sides[1].path is "carrier-pigeon", not a path dbsock measures`},
	} {
		refused(t, tt.name, edited(t, v2File, tt.edit), tt.want)
	}
	refused(t, "v1 path compared with itself", edited(t, v1File, func(r map[string]any) {
		summary0(r)["paths"] = []any{map[string]any{"path": "tls", "baseline": "tls"}}
	}), `summary[0].paths[0].path is "tls", its own baseline`)
}

// TestReadJSONBoundsCost: a histogram of a wider geometry than dbsock's
// (1 ns to MaxInt64 at 5 digits decodes to 49 MB) and more runs than
// MaxRuns are refused, saying the bound, before anything is decoded.
func TestReadJSONBoundsCost(t *testing.T) {
	wide := hdrhistogram.New(1, math.MaxInt64, 5)
	_ = wide.RecordValue(1000)
	enc, err := EncodeHistogram(wide)
	if err != nil {
		t.Fatal(err)
	}
	refused(t, "wide histogram", edited(t, v2File, func(r map[string]any) {
		r["runs"].([]any)[2].(map[string]any)["histogram"] = enc
	}), "runs[2].histogram is refused: a histogram of 1 ns to 9223372036854775807 ns at 5 significant digits: dbsock reads only its own, 1 ns to 60 s at 3 significant digits")
	if _, err := DecodeHistogram(enc); err == nil || !strings.Contains(err.Error(), "1 ns to 60 s at 3 significant digits") {
		t.Errorf("DecodeHistogram of a wide histogram: %v", err)
	}
	refused(t, "too many runs", edited(t, v2File, func(r map[string]any) {
		runs := r["runs"].([]any)
		for len(runs) <= MaxRuns {
			runs = append(runs, map[string]any{"target": "redis", "transport": "tcp", "round": 1})
		}
		r["runs"] = runs
	}), "the report holds 10001 runs; dbsock reads at most 10000")
	refused(t, "too many blocks", edited(t, v2File, func(r map[string]any) {
		run := r["runs"].([]any)[0].(map[string]any)
		blocks := make([]any, MaxBlocks+1)
		for i := range blocks {
			blocks[i] = map[string]any{}
		}
		run["blocks"] = blocks
	}), "blocks in its runs; dbsock reads at most 100000")
	// dbsock's own histograms are read.
	if _, err := ReadJSON(strings.NewReader(edited(t, v2File, func(map[string]any) {}))); err != nil {
		t.Fatal(err)
	}
}
