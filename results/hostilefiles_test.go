package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// atLoadFile is a real report of dbsock run redis --provider local --n 200
// --rate 1000,2000 --slo 'p99<2ms' --instances 2 --blocks 4 --clients go,c
// --threshold 'redis.unix.p99<1us' --threshold 'redis@c.unix.stack_ratio>0'
// on a 2-CPU machine busy with other work: every case's generator fell
// behind but one side's, the objective held no rate, the first threshold
// was violated.
const atLoadFile = "../reports/testdata/atload-stacks.json"

func objective0(r map[string]any) map[string]any {
	return r["objectives"].([]any)[0].(map[string]any)["capacities"].([]any)[0].(map[string]any)
}

func side(r map[string]any, s, k int) map[string]any {
	return r["summary"].([]any)[s].(map[string]any)["sides"].([]any)[k].(map[string]any)
}

func stack0(r map[string]any) map[string]any { return r["stacks"].([]any)[0].(map[string]any) }

// TestReadJSONRefusesWhatItsOwnDataDoesNotSay: each figure a file holds
// that dbsock derives from the file's own data (objectives from the
// cases, generators from the blocks, at-load figures from the blocks,
// stack comparisons from the runs, thresholds from the cases) is refused
// where it says otherwise, naming the field; the real report reads.
func TestReadJSONRefusesWhatItsOwnDataDoesNotSay(t *testing.T) {
	if _, err := ReadJSON(strings.NewReader(edited(t, atLoadFile, func(map[string]any) {}))); err != nil {
		t.Fatalf("the real report is refused: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(r map[string]any)
		want string
	}{
		{"an objective's held shorter than its rates", func(r map[string]any) {
			o := objective0(r)
			o["held"] = o["held"].([]any)[:1]
		}, "objectives[0].capacities[0].held holds 1, where the file's own cases give 2"},
		{"an objective's rate of -5", func(r map[string]any) { objective0(r)["rates"].([]any)[0] = -5 },
			"objectives[0].capacities[0].rates[0] is -5, where the file's own cases give 1000"},
		{"an objective's rate of 300 digits", func(r map[string]any) {
			objective0(r)["rates"].([]any)[1] = json.Number("1" + strings.Repeat("0", 299))
		}, "objectives[0].capacities[0].rates[1] is 1e+299, where the file's own cases give 2000"},
		{"an objective held that the cases do not", func(r map[string]any) {
			o := objective0(r)
			o["held"], o["highest_rate"], o["at_least"] = []any{true, true}, 2000, true
		}, "objectives[0].capacities[0].at_least is true, where the file's own cases give none"},
		{"objectives without an objective", func(r map[string]any) { delete(r["config"].(map[string]any), "slo") },
			"objectives holds 2, where the run had no objective (config.slo is absent)"},
		{"reached -1,000,000", func(r map[string]any) {
			side(r, 0, 0)["generator"].(map[string]any)["achieved_rate"] = -1e6
		}, "summary[0].sides[0].generator.achieved_rate is -1000000, where the file's own runs give 1010.28"},
		{"a lag p99 of -9223372036854776 µs", func(r map[string]any) {
			side(r, 0, 1)["generator"].(map[string]any)["lag_p99_ns"] = math.MinInt64
		}, "summary[0].sides[1].generator.lag_p99_ns is -9223372036854775808, where the file's own runs give"},
		{"fell_behind false where the blocks are behind", func(r map[string]any) {
			side(r, 0, 0)["generator"].(map[string]any)["fell_behind"] = false
		}, "summary[0].sides[0].generator.fell_behind is false, where the file's own runs give true"},
		{"a run's generator against its blocks", func(r map[string]any) {
			g := r["runs"].([]any)[0].(map[string]any)["generator"].(map[string]any)
			g["blocks_behind"], g["fell_behind"] = 0, false
		}, "runs[0].generator.blocks_behind is 0, where the file's own blocks give"},
		{"a generator on a closed loop", func(r map[string]any) {
			run := r["runs"].([]any)[0].(map[string]any)
			run["rate"] = 0
		}, "runs[0].generator is given for a closed-loop run (rate 0)"},
		{"a threshold the file says passed", func(r map[string]any) {
			r["thresholds"].([]any)[0].(map[string]any)["ok"] = true
		}, "thresholds[0].ok is true, where the file's own cases give false"},
		{"a threshold of no expression", func(r map[string]any) {
			r["thresholds"].([]any)[0].(map[string]any)["expr"] = "redis.unix.p99 is fine"
		}, "thresholds[0].expr is not a threshold dbsock checks"},
		{"a threshold result too few", func(r map[string]any) {
			r["thresholds"] = r["thresholds"].([]any)[:3]
		}, "thresholds holds 3 results, where the file's own cases give 4"},
		{"capacity 1e27× on a case that fell behind", func(r map[string]any) {
			comparison0(r)["capacity"].(map[string]any)["ratio"] = 1e27
		}, "summary[0].comparisons[0].capacity.ratio is 1e+27, where the file's own blocks give"},
		{"a tail the blocks do not give", func(r map[string]any) {
			comparison0(r)["tail"].(map[string]any)["verdict_kind"] = "unix_faster"
		}, `summary[0].comparisons[0].tail.verdict_kind is "unix_faster", where the file's own blocks give`},
		{"a verdict at a rate the generator fell behind at", func(r map[string]any) {
			comparison0(r)["verdict_kind"] = "unix_faster"
		}, `summary[0].comparisons[0].verdict_kind is "unix_faster", where the file's own intervals and sides give "fell_behind"`},
		{"a Holm-adjusted p-value below the raw one", func(r map[string]any) { comparison0(r)["p_value_holm"] = 0 },
			"summary[0].comparisons[0].p_value_holm is 0, where the file's own p-values give"},
		{"a stack comparison's ratio of 1e308", func(r map[string]any) { stack0(r)["ratio"] = 1e308 },
			"stacks[0].ratio is 1e+308, where the file's own runs give"},
		{"a stack comparison's interval whose lo exceeds its hi", func(r map[string]any) {
			stack0(r)["ratio_ci"] = map[string]any{"center": 1.1, "lo": 1.2, "hi": 1.0, "confidence": 0.95}
		}, `stacks[0].ratio_ci is {"center":1.1,"confidence":0.95,"hi":1,"lo":1.2,"pairs":0,"rounds":0}, where the file's own runs give none`},
		{"a stack comparison of no stack", func(r map[string]any) { r["stacks"] = append(r["stacks"].([]any), stack0(r)) },
			"stacks holds 3, where the file's own runs give 2"},
		{"a block's lag below 0", func(r map[string]any) {
			r["runs"].([]any)[0].(map[string]any)["blocks"].([]any)[0].(map[string]any)["late_p99_ns"] = -1
		}, "runs[0].blocks[0].late_p99_ns is -1, outside what a run can produce"},
		{"a server CPU per op below 0", func(r map[string]any) {
			side(r, 0, 0)["cpu"].(map[string]any)["server_ns_per_op"] = -5
		}, "summary[0].sides[0].cpu.server_ns_per_op is -5, outside what a run can produce"},
		{"a swept rate of -5", func(r map[string]any) { r["config"].(map[string]any)["rates"] = []any{-5, 1000} },
			"config.rates[0] is -5, not a rate dbsock run accepts"},
		{"an objective of p42", func(r map[string]any) {
			r["config"].(map[string]any)["slo"].(map[string]any)["percentile"] = "p42"
		}, `config.slo.percentile is "p42", not one dbsock measures`},
	} {
		refused(t, tt.name, edited(t, atLoadFile, tt.edit), tt.want)
	}
}

// TestReadJSONWritesThresholdWordsAgain: a threshold's result in words is
// written again from its figures, whatever the file said.
func TestReadJSONWritesThresholdWordsAgain(t *testing.T) {
	r, err := ReadJSON(strings.NewReader(edited(t, atLoadFile, func(r map[string]any) {
		r["thresholds"].([]any)[0].(map[string]any)["actual_text"] = "p99 1ns: all is well"
	})))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Thresholds[0].ActualText; got != "p99 13.819903ms" {
		t.Errorf("the threshold's words are %q, want those of its figure, p99 13.819903ms", got)
	}
}
