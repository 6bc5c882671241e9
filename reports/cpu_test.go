package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestCPUWithoutContextSwitches: where the OS counts a server's CPU time
// but not its context switches (macOS), the CPU table gives the time and
// leaves the switches empty, through pooling, rather than print zeros.
func TestCPUWithoutContextSwitches(t *testing.T) {
	ns := func(v int64) *int64 { return &v }
	side := func(serverNs int64) *results.CPU {
		one := results.NewCPU(1000, 9_000_000, 1100, ns(serverNs/2), nil, "gopsutil")
		return one.Pool(results.NewCPU(1000, 9_000_000, 1100, ns(serverNs/2), nil, "gopsutil"))
	}
	tcp, unix := side(24_000_000), side(16_000_000)
	if unix.ServerNsPerOp == nil || *unix.ServerNsPerOp != 8000 || unix.ServerCswPerOp != nil {
		t.Fatalf("pooled: server ns/op %v, csw/op %v; want 8000 and none", unix.ServerNsPerOp, unix.ServerCswPerOp)
	}
	var b strings.Builder
	writeCPU(&b, &results.Summary{Sides: []results.PathSide{{Path: drivers.TCP, Side: results.Side{CPU: tcp}}, {Path: drivers.Unix, Side: results.Side{CPU: unix}}}})
	for _, want := range []string{"| TCP | 9.0 µs | 1.10 | not counted | 12.0 µs | – | – | 83333 |", "| Unix | 9.0 µs | 1.10 | not counted | 8.0 µs | – | – | 125000 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the CPU table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestClientMeterNamesWhatRanTheOps: the CPU table's note names the
// process whose CPU was read as the client's: dbsock's own process for
// the in-process Go client, dbsock's own agent when the Go client ran as
// a fresh process for each server instance, a stack's agent otherwise.
func TestClientMeterNamesWhatRanTheOps(t *testing.T) {
	for _, c := range []struct {
		sum   results.Summary
		place string
		want  string
	}{
		{results.Summary{}, "", "dbsock's whole process"},
		{results.Summary{Client: &results.Client{FreshProcess: true}}, "", "dbsock's own agent's process tree, a fresh process for each server instance"},
		{results.Summary{Case: results.Case{Stack: "c"}, Client: &results.Client{FreshProcess: true}}, "", "the c agent's process tree"},
		{results.Summary{}, "container", "dbsock's own agent's process tree in the client container"},
	} {
		if got := clientMeter(&c.sum, c.place); !strings.HasPrefix(got, c.want) {
			t.Errorf("clientMeter(stack %q, fresh %v, %q) = %q, want it to begin %q", c.sum.Stack, c.sum.Client != nil, c.place, got, c.want)
		}
	}
}
