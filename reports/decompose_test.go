package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestDecompositionFromStacks: with cases from several stacks, the
// decomposition names each row's stack, and the split is the stack's own:
// the kernel floor from C, the stack's client above it.
func TestDecompositionFromStacks(t *testing.T) {
	plain := func(target, stack string, tcp, unix int64) results.Summary {
		return results.Summary{Case: results.Case{Target: target, Scenario: "pk", Concurrency: 1, Stack: stack},
			Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{Latency: results.Latency{P50: tcp}}}, {Path: drivers.Unix, Side: results.Side{Latency: results.Latency{P50: unix}}}}}
	}
	r := &results.Report{Targets: []results.Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}},
		Summary: []results.Summary{plain("floor", "", 17000, 11000), plain("floor", "c", 15000, 8000), plain("echo", "", 22000, 15000),
			plain("redis", "", 40000, 30000), plain("redis", "c", 30000, 21000)}}
	r.Summary[1].Client = &results.Client{Language: "C", FloorReference: true} // as agents/c/stack.json declares
	var b strings.Builder
	writeDecomposition(&b, r)
	for _, want := range []string{"| target and client | transport | kernel floor | + the stack's client |",
		"| redis from go | TCP | 15.0 µs | +7.0 µs | +18.0 µs | 40.0 µs |", "| redis from c | Unix | 8.0 µs | +0.0 µs | +13.0 µs | 21.0 µs |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// TestWaitsTable: with each side's time waiting for a CPU, --explain's
// section gives it per case and path beside the client's CPU per op.
func TestWaitsTable(t *testing.T) {
	cw, sw := 12_300.0, 45_600.0
	r := &results.Report{Summary: []results.Summary{{Case: results.Case{Target: "postgres", Scenario: "pk", ValueSize: 6, Placement: "same"},
		Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{CPU: &results.CPU{ClientNsPerOp: 80_000, ClientCswPerOp: 2.5, ClientWaitNsPerOp: &cw, ServerWaitNsPerOp: &sw}}}}}}}
	var b strings.Builder
	writeWaits(&b, r)
	for _, want := range []string{"| postgres: pk, 6 B values, placed shared | TCP | 80.0 µs | 2.50 | 12.3 µs | 45.6 µs |", "the server a request wakes waits until the client gives the CPU up"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("%q lacks %q", b.String(), want)
		}
	}
}
