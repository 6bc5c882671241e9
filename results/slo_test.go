package results

import (
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// TestParseSLO reads the objectives the docs show and refuses the rest
// with what an objective is.
func TestParseSLO(t *testing.T) {
	for in, want := range map[string]SLO{
		"p99<2ms":      {"p99", int64(2 * time.Millisecond)},
		"p50<=300us":   {"p50", 300_000},
		"p99.9 < 10ms": {"p99.9", int64(10 * time.Millisecond)},
		"p99<1.5ms":    {"p99", 1_500_000},
		"p50<800µs":    {"p50", 800_000},
	} {
		if got, err := ParseSLO(in); err != nil || got != want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "p95<2ms", "p99>2ms", "p99<2", "p99<2s", "p99<0ms", "p99<2ms;rm"} {
		if _, err := ParseSLO(in); err == nil || !strings.Contains(err.Error(), "p99<2ms") && !strings.Contains(err.Error(), "out of range") {
			t.Errorf("ParseSLO(%q): %v, want a refusal that shows an objective", in, err)
		}
	}
}

// TestEvaluateSLO: over a sweep of rates, each path's highest rate is the
// highest it held (its generator kept the schedule and its p99 was within
// the limit), whatever order the cases ran in; the headroom is the
// socket's over TCP; a path that held none has no headroom.
func TestEvaluateSLO(t *testing.T) {
	side := func(p99 int64, behind bool) Side {
		return Side{N: 100, Latency: Latency{P50: p99 / 4, P99: p99}, Generator: &Generator{OfferedRate: 1, AchievedRate: 1, FellBehind: behind}}
	}
	sum := func(rate float64, tcp, unix Side) Summary {
		return Summary{Case: Case{Target: "redis", Scenario: "pk", Concurrency: 8, Rate: rate},
			Sides: []PathSide{{Path: drivers.TCP, Side: tcp}, {Path: drivers.Unix, Side: unix}}}
	}
	ms := int64(time.Millisecond)
	summary := []Summary{
		sum(8000, side(3*ms, false), side(ms, false)),
		sum(2000, side(ms/2, false), side(ms/4, false)),
		sum(16000, side(9*ms, true), side(ms, true)), // the socket fell behind: not held, whatever its p99
		sum(4000, side(ms, false), side(ms/2, false)),
		{Case: Case{Target: "redis", Scenario: "pk", Concurrency: 1}}, // a closed loop: no part of it
	}
	res := EvaluateSLO(summary, SLO{Percentile: "p99", LimitNs: 2 * ms}, drivers.TCP)
	if len(res) != 1 || len(res[0].Capacities) != 2 {
		t.Fatalf("%+v", res)
	}
	tcp, unix := res[0].Capacities[0], res[0].Capacities[1]
	if tcp.HighestRate != 4000 || unix.HighestRate != 8000 || res[0].Headroom[drivers.Unix] != 2 {
		t.Errorf("tcp %+v, unix %+v, headroom %v; want 4,000, 8,000 and 2", tcp, unix, res[0].Headroom)
	}
	if want := []float64{2000, 4000, 8000, 16000}; len(tcp.Rates) != 4 || tcp.Rates[0] != want[0] || tcp.Rates[3] != want[3] || tcp.Held[2] || !tcp.Held[1] {
		t.Errorf("tcp rates %v held %v", tcp.Rates, tcp.Held)
	}
	// A rate held above one missed is not counted (the miss says the
	// path does not hold that load reliably), and is given beside.
	summary[1] = sum(2000, side(ms/2, false), side(3*ms, false))
	res = EvaluateSLO(summary, SLO{Percentile: "p99", LimitNs: 2 * ms}, drivers.TCP)
	if unix := res[0].Capacities[1]; unix.HighestRate != 0 || unix.HeldAbove != 8000 || res[0].Headroom != nil {
		t.Errorf("unix missed 2,000 but held 4,000 and 8,000: %+v, headroom %v; want none held (8,000 held above a miss) and no headroom", unix, res[0].Headroom)
	}
	res = EvaluateSLO(summary, SLO{Percentile: "p99", LimitNs: 100_000}, drivers.TCP)
	if res[0].Capacities[0].HighestRate != 0 || res[0].Headroom != nil {
		t.Errorf("none held: %+v", res[0])
	}
}

// TestSLOAtLeast: a path that held every rate measured has a highest rate
// of at least the top one, and two such paths give no headroom.
func TestSLOAtLeast(t *testing.T) {
	side := Side{N: 100, Latency: Latency{P99: 1000}, Generator: &Generator{}}
	var summary []Summary
	for _, rate := range []float64{1000, 2000} {
		summary = append(summary, Summary{Case: Case{Target: "redis", Rate: rate}, Sides: []PathSide{{Path: drivers.TCP, Side: side}, {Path: drivers.Unix, Side: side}}})
	}
	res := EvaluateSLO(summary, SLO{Percentile: "p99", LimitNs: 2000}, drivers.TCP)
	if c := res[0].Capacities; !c[0].AtLeast || !c[1].AtLeast || c[1].HighestRate != 2000 || res[0].Headroom != nil {
		t.Errorf("%+v, want both at least 2,000/s and no headroom", res[0])
	}
}

// TestSLOHeadroomBounds: a path that held every rate measured against a
// baseline that did not has a headroom that is a lower bound (its own
// highest rate may be higher); against a baseline that held every rate, a
// path that did not has one that is an upper bound.
func TestSLOHeadroomBounds(t *testing.T) {
	side := func(p99 int64) Side {
		return Side{N: 100, Latency: Latency{P99: p99}, Generator: &Generator{}}
	}
	eval := func(tcp, unix [2]int64) SLOResult {
		var summary []Summary
		for i, rate := range []float64{1000, 2000} {
			summary = append(summary, Summary{Case: Case{Target: "redis", Rate: rate},
				Sides: []PathSide{{Path: drivers.TCP, Side: side(tcp[i])}, {Path: drivers.Unix, Side: side(unix[i])}}})
		}
		return EvaluateSLO(summary, SLO{Percentile: "p99", LimitNs: 2000}, drivers.TCP)[0]
	}
	res := eval([2]int64{1000, 3000}, [2]int64{1000, 1000}) // TCP held 1,000; Unix both
	if res.Headroom[drivers.Unix] != 2 || !res.HeadroomAtLeast[drivers.Unix] || res.HeadroomAtMost[drivers.Unix] {
		t.Errorf("Unix held every rate, TCP 1,000/s: %+v; want a headroom of at least 2", res)
	}
	res = eval([2]int64{1000, 1000}, [2]int64{1000, 3000}) // TCP both; Unix 1,000
	if res.Headroom[drivers.Unix] != 0.5 || res.HeadroomAtLeast[drivers.Unix] || !res.HeadroomAtMost[drivers.Unix] {
		t.Errorf("TCP held every rate, Unix 1,000/s: %+v; want a headroom of at most 0.5", res)
	}
	res = eval([2]int64{1000, 3000}, [2]int64{3000, 3000})
	if res.HeadroomAtLeast != nil || res.HeadroomAtMost != nil {
		t.Errorf("no headroom, no bound: %+v", res)
	}
}

// TestSLOErrors: an op that failed is within no limit: a path whose
// failed ops are over the objective's share (1%; 0.1% at p99.9) holds no
// rate, however fast the ops that succeeded.
func TestSLOErrors(t *testing.T) {
	fast := Latency{P50: 100, P99: 100, P999: 100}
	for _, tt := range []struct {
		pct    string
		errors int64
		holds  bool
	}{{"p99", 0, true}, {"p99", 10, true}, {"p99", 11, false}, {"p99", 990, false}, {"p50", 11, false}, {"p99.9", 1, true}, {"p99.9", 2, false}} {
		s := Side{N: 1000, Errors: tt.errors, Latency: fast, Generator: &Generator{}}
		if got := (SLO{Percentile: tt.pct, LimitNs: 2000}).Holds(s); got != tt.holds {
			t.Errorf("%s < 2µs with %d of 1,000 ops failed: holds %v, want %v", tt.pct, tt.errors, got, tt.holds)
		}
	}
}
