package results

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		expr    string
		want    Threshold
		wantErr string
	}{
		{"redis.unix.p99<2ms", Threshold{Target: "redis", Side: "unix", Metric: "p99", Op: "<", Value: float64(2 * time.Millisecond)}, ""},
		{"mysql.unix_speedup_p50>=1.0", Threshold{Target: "mysql", Metric: "unix_speedup_p50", Op: ">=", Value: 1}, ""},
		{"echo.tcp.errors == 0", Threshold{Target: "echo", Side: "tcp", Metric: "errors", Op: "==", Value: 0}, ""},
		{"redis.unix_speedup_p50.lo>=1.1", Threshold{Target: "redis", Metric: "unix_speedup_p50", Bound: "lo", Op: ">=", Value: 1.1}, ""},
		{"redis.unix_speedup_mean.hi<2", Threshold{Target: "redis", Metric: "unix_speedup_mean", Bound: "hi", Op: "<", Value: 2}, ""},
		{"redis.unix_speedup_p50.mid>=1", Threshold{}, "is not a metric"},
		{"redis.unix.p50.lo<1ms", Threshold{}, "is not a metric"},
		{"redis.unix.p99", Threshold{}, "no comparison"},
		{"redis.udp.p99<1ms", Threshold{}, "is not a metric"},
		{"redis.tcp6.p99<1ms", Threshold{Target: "redis", Side: "tcp6", Metric: "p99", Op: "<", Value: float64(time.Millisecond)}, ""},
		{"redis.tcp6_speedup_p50>=0.95", Threshold{Target: "redis", Side: "tcp6", Metric: "speedup_p50", Op: ">=", Value: 0.95}, ""},
		{"redis.tcp6_speedup_p50.lo>=0.9", Threshold{Target: "redis", Side: "tcp6", Metric: "speedup_p50", Bound: "lo", Op: ">=", Value: 0.9}, ""},
		{"redis.tcp_speedup_p50>=1", Threshold{}, "is not a metric"},
		{"redis.tls.speedup_p50>=1", Threshold{Target: "redis", Side: "tls", Metric: "speedup_p50", Op: ">=", Value: 1}, ""},
		{"redis.unix.speedup_p50.lo>=1", Threshold{Target: "redis", Side: "unix", Metric: "speedup_p50", Bound: "lo", Op: ">=", Value: 1}, ""},
		{"redis.tcp.speedup_mean.hi<2", Threshold{Target: "redis", Side: "tcp", Metric: "speedup_mean", Bound: "hi", Op: "<", Value: 2}, ""},
		{"redis.tls.speedup_p50.mid>=1", Threshold{}, "is not a metric"},
		{"redis.tls.p50.lo<1ms", Threshold{}, "is not a metric"},
		{"redis.udp_speedup_p50>=1", Threshold{}, "is not a metric"},
		{"redis.unix.p42<1ms", Threshold{}, "is not a metric"},
		{"redis.unix.p99<soon", Threshold{}, "not a duration"},
		{"redis.unix_speedup_p50>much", Threshold{}, "not a number"},
		{"redis.unix_speedup_p50>NaN", Threshold{}, "not a number"},
		{"redis.unix_speedup_p50.lo>=-Inf", Threshold{}, "not a number"},
		{"redis.tcp.error_rate<Inf", Threshold{}, "not a number"},
		{"redis.tcp.p50<-1ms", Threshold{}, "not a duration"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.expr)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error %v, want %q", tt.expr, err, tt.wantErr)
			}
			continue
		}
		tt.want.Expr = tt.expr
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.expr, got, err, tt.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	r := &Report{Summary: []Summary{{
		Case: Case{Target: "redis", Scenario: "pk"},
		Sides: []PathSide{{Path: "tcp", Side: Side{N: 100, Latency: Latency{P50: 10000, P99: 40000}}},
			{Path: "unix", Side: Side{N: 100, Errors: 1, Latency: Latency{P50: 7000, P99: 30000}}}},
		Comparisons: []Comparison{{Path: "unix", Baseline: "tcp", SpeedupP50: 1.4, SpeedupP50CI: &Interval{Center: 1.4, Lo: 1.05, Hi: 1.6}}},
	}}}
	parse := func(e string) Threshold {
		th, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	got := Evaluate(r, []Threshold{parse("redis.unix.p50<8us"), parse("redis.unix.p50<1ns"), parse("redis.unix_speedup_p50>=1"),
		parse("redis.unix.error_rate<0.005"), parse("mongo.tcp.p50<1s"),
		parse("redis.unix_speedup_p50.lo>=1.1"), parse("redis.unix_speedup_p50.hi<=1.6"), parse("redis.unix_speedup_mean.lo>0")})
	want := []bool{true, false, true, false, false, false, true, false}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].OK != want[i] {
			t.Errorf("%s: ok=%v, want %v (%s)", got[i].Expr, got[i].OK, want[i], got[i].ActualText)
		}
	}
	if !strings.Contains(got[4].ActualText, "no result for target mongo") {
		t.Errorf("missing target: %q", got[4].ActualText)
	}
	if got[5].ActualText != "unix_speedup_p50.lo 1.05" || !strings.Contains(got[7].ActualText, "no interval") {
		t.Errorf("interval bounds: %q, %q", got[5].ActualText, got[7].ActualText)
	}
	if got[1].ActualText != "p50 7µs" {
		t.Errorf("actual text %q", got[1].ActualText)
	}
}

// TestThresholdsFailOnIncompleteRuns: a threshold the figures would pass
// fails when its target did not finish, and says why.
func TestThresholdsFailOnIncompleteRuns(t *testing.T) {
	th, err := Parse("redis.unix.p50<1s")
	if err != nil {
		t.Fatal(err)
	}
	sum := Summary{Case: Case{Target: "redis", Scenario: "pk"}, Sides: []PathSide{{Path: "tcp", Side: Side{N: 100, Latency: Latency{P50: 10000}}}, {Path: "unix", Side: Side{N: 100, Latency: Latency{P50: 7000}}}}}
	for name, r := range map[string]*Report{
		"target failed": {Summary: []Summary{sum}, Targets: []Target{{Name: "redis", Error: "redis over unix /x went away"}}},
		"run stopped":   {Summary: []Summary{sum}, Runs: []Run{{Case: sum.Case, Round: 2, Transport: "unix", Failure: Failure{Incomplete: true, Error: "server gone"}}}},
	} {
		got := Evaluate(r, []Threshold{th})
		if len(got) != 1 || got[0].OK || !strings.Contains(got[0].ActualText, "not judged: the run did not finish") {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if got := Evaluate(&Report{Summary: []Summary{sum}}, []Threshold{th}); !got[0].OK {
		t.Errorf("a complete run fails: %+v", got)
	}
}

// TestThresholdWithoutIntervalKeepsTheJSON: an interval bound asked of a
// case without an interval fails with a reason, and the report still
// encodes (its actual is null, not NaN).
func TestThresholdWithoutIntervalKeepsTheJSON(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Summary: []Summary{{Case: Case{Target: "redis", Scenario: "pk"}, Comparisons: []Comparison{{Path: "unix", Baseline: "tcp", SpeedupP50: 1.2}}}}}
	th, err := Parse("redis.unix_speedup_p50.lo>=1.0")
	if err != nil {
		t.Fatal(err)
	}
	r.Thresholds = Evaluate(r, []Threshold{th})
	if len(r.Thresholds) != 1 || r.Thresholds[0].OK || r.Thresholds[0].Actual != nil || !strings.Contains(r.Thresholds[0].ActualText, "no interval") {
		t.Fatalf("got %+v, want a failed threshold with no actual and a reason", r.Thresholds)
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatalf("the report does not encode: %v", err)
	}
	if !strings.Contains(b.String(), `"actual": null`) {
		t.Fatalf("actual is not null in %s", b.String())
	}
}

// TestThresholdsOnAFurtherPath: a further path's latency and its speedup
// over the baseline are judged from the case's sides and comparisons, by
// either name; a case without that path, or a path that is the baseline,
// holds nothing, and says so.
func TestThresholdsOnAFurtherPath(t *testing.T) {
	r := &Report{Summary: []Summary{{
		Case:  Case{Target: "redis", Scenario: "pk"},
		Sides: []PathSide{{Path: "tcp", Side: Side{N: 100, Latency: Latency{P50: 10000}}}, {Path: "tcp6", Side: Side{N: 100, Latency: Latency{P50: 9800, P99: 30000}}}},
		Comparisons: []Comparison{{Path: "tcp6", Baseline: "tcp", SpeedupP50: 1.02, SpeedupP50CI: &Interval{Center: 1.02, Lo: 0.99, Hi: 1.04},
			SpeedupMean: 1.01, SpeedupMeanCI: &Interval{Center: 1.01, Lo: 1.005, Hi: 1.03}}},
	}, {
		Case: Case{Target: "mongo", Scenario: "pk"},
	}}}
	var ths []Threshold
	for _, e := range []string{"redis.tcp6.p99<40us", "redis.tcp6_speedup_p50>=1.01", "redis.tcp6_speedup_p50.lo>=1", "mongo.tcp6.p50<1s",
		"redis.tcp6.speedup_p50>=1.01", "redis.tcp6.speedup_mean.lo>=1", "redis.tcp.speedup_p50>=1"} {
		th, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		ths = append(ths, th)
	}
	got := Evaluate(r, ths)
	want := []struct {
		ok   bool
		text string
	}{{true, "p99 30µs"}, {true, "tcp6_speedup_p50 1.02"}, {false, "tcp6_speedup_p50.lo 0.99"}, {false, "p50: no tcp6 path measured in this case"},
		{true, "tcp6_speedup_p50 1.02"}, {true, "tcp6_speedup_mean.lo 1.005"},
		{false, "tcp_speedup_p50: no comparison of tcp with the baseline in this case (it is the baseline, or was not measured)"}}
	for i, w := range want {
		if got[i].OK != w.ok || got[i].ActualText != w.text {
			t.Errorf("%s: ok %v %q, want %v %q", got[i].Expr, got[i].OK, got[i].ActualText, w.ok, w.text)
		}
	}
}
