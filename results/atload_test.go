package results

import (
	"math"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestTailAndCapacityPaired: the p99 and the server CPU per op are
// compared block pair by block pair as the p50 is. Nine pairs whose p99
// ratios are 1.1 to 1.9 give their median, 1.5, and the distribution-free
// interval from the 2nd and 8th order statistics (coverage 1 - 2 P(B <= 1)
// for B ~ Binomial(9, 1/2) = 1 - 20/512 = 0.961: Conover 1999, 3.2); a
// socket that spends 0.8 of TCP's server CPU per op in every pair serves
// 1.25 times the lookups per server core. A report without server CPU has
// no capacity comparison.
func TestTailAndCapacityPaired(t *testing.T) {
	var tcp, unix []Block
	for i := 0; i < 9; i++ {
		r := 1.1 + 0.1*float64(i)
		tcp = append(tcp, Block{Pair: i, N: 100, P50: 2000, Mean: 2000, P99: int64(math.Round(10000 * r)), ServerCPUNs: 1_000_000})
		unix = append(unix, Block{Pair: i, N: 100, P50: 1000, Mean: 1000, P99: 10000, ServerCPUNs: 800_000})
	}
	mk := func(tr drivers.Transport, blocks []Block) Run {
		return Run{Case: Case{Target: "redis", Scenario: "pk", Concurrency: 1}, Transport: tr, Round: 1, N: 900, Blocks: blocks,
			Timing: Timing{Latency: Latency{P50: 1000, Mean: 1000}, ElapsedNs: 1e9}, Connection: Connection{TransportVerified: true}}
	}
	rep := &Report{SchemaVersion: SchemaVersion, Runs: []Run{mk(drivers.TCP, tcp), mk(drivers.Unix, unix)}}
	if err := rep.Summarize(); err != nil {
		t.Fatal(err)
	}
	c := rep.Summary[0].Comparisons[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if tl := c.Tail; tl == nil || tl.CI == nil || !near(tl.Ratio, 1.5) || !near(tl.CI.Lo, 1.2) || !near(tl.CI.Hi, 1.8) ||
		math.Abs(tl.CI.Confidence-(1-20.0/512)) > 1e-9 || tl.Pairs != 9 || tl.Kind != UnixFaster {
		t.Errorf("tail %+v (ci %+v), want 1.5 (1.2-1.8) at 0.961, 9 pairs, unix_faster", tl, tl.CI)
	}
	if cp := c.Capacity; cp == nil || cp.CI == nil || !near(cp.Ratio, 1.25) || !near(cp.CI.Lo, 1.25) || !near(cp.CI.Hi, 1.25) || cp.Kind != UnixFaster {
		t.Errorf("capacity %+v, want 1.25 in every pair, unix_faster", cp)
	}
	for i := range rep.Runs {
		for j := range rep.Runs[i].Blocks {
			rep.Runs[i].Blocks[j].ServerCPUNs = 0
		}
	}
	rep.Summary = nil
	if err := rep.Summarize(); err != nil {
		t.Fatal(err)
	}
	if c := rep.Summary[0].Comparisons[0]; c.Capacity != nil || c.Tail == nil {
		t.Errorf("without server CPU: capacity %+v, tail %+v", c.Capacity, c.Tail)
	}
}
