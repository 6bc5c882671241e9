package results

import (
	"fmt"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// summaryOf is a plain case of target from stack with these p50s (ns).
// floorReference is s from a stack that declares itself the floor's
// reference (agents/c/stack.json).
func floorReference(s Summary) Summary {
	s.Client = &Client{Language: "C", FloorReference: true}
	return s
}

func summaryOf(target, stack string, tcp, unix int64) Summary {
	return Summary{Case: Case{Target: target, Scenario: "pk", Concurrency: 1, Stack: stack},
		Sides: []PathSide{{Path: drivers.TCP, Side: Side{Latency: Latency{P50: tcp}}}, {Path: drivers.Unix, Side: Side{Latency: Latency{P50: unix}}}}}
}

// TestDecomposeStacks: with floor measured from C, every stack's case is
// split over the C floor (the kernel's own): Go's client is its echo above
// it, another stack's its own floor above it; a stack without a floor
// (node here) is not split, and each stack's case is read from its own
// summary, never another stack's.
func TestDecomposeStacks(t *testing.T) {
	r := &Report{Targets: []Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}, {Name: "redis"}},
		Summary: []Summary{
			summaryOf("floor", "", 17000, 11000), floorReference(summaryOf("floor", "c", 15000, 8000)), summaryOf("floor", "python", 20000, 13000),
			summaryOf("echo", "", 22000, 15000),
			summaryOf("redis", "", 40000, 30000), summaryOf("redis", "c", 30000, 21000), summaryOf("redis", "python", 45000, 33000),
			summaryOf("redis", "node", 60000, 40000),
		}}
	want := map[string]Decomposition{
		"redis@ tcp":        {Kernel: 15000, Client: 7000, Server: 18000, Total: 40000},
		"redis@ unix":       {Kernel: 8000, Client: 7000, Server: 15000, Total: 30000},
		"redis@c tcp":       {Kernel: 15000, Client: 0, Server: 15000, Total: 30000},
		"redis@c unix":      {Kernel: 8000, Client: 0, Server: 13000, Total: 21000},
		"redis@python tcp":  {Kernel: 15000, Client: 5000, Server: 25000, Total: 45000},
		"redis@python unix": {Kernel: 8000, Client: 5000, Server: 20000, Total: 33000},
	}
	parts := Decompose(r)
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(parts), len(want), parts)
	}
	for _, d := range parts {
		key := d.Target + "@" + d.Stack + " " + string(d.Transport)
		w, ok := want[key]
		if !ok || d.Kernel != w.Kernel || d.Client != w.Client || d.Server != w.Server || d.Total != w.Total {
			t.Errorf("%s: %+v, want %+v", key, d, w)
		}
	}
}

// TestDecomposeGoOnly: without C, the kernel floor is Go's blocking
// client's, as before stacks were measured.
func TestDecomposeGoOnly(t *testing.T) {
	r := &Report{Targets: []Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}},
		Summary: []Summary{summaryOf("floor", "", 17000, 11000), summaryOf("echo", "", 22000, 15000), summaryOf("redis", "", 40000, 30000)}}
	parts := Decompose(r)
	if len(parts) != 2 || parts[0].Kernel != 17000 || parts[0].Client != 5000 || parts[0].Server != 18000 || parts[0].Stack != "" {
		t.Fatalf("%+v", parts)
	}
	r.Summary = r.Summary[1:]
	if Decompose(r) != nil {
		t.Error("a decomposition without the floor")
	}
}

// TestDecomposeEveryPath: every path floor and echo measured is split, a
// further one (TLS) as TCP and Unix are; a path echo did not measure is
// not.
func TestDecomposeEveryPath(t *testing.T) {
	withTLS := func(s Summary, tls int64) Summary {
		s.Sides = append(s.Sides, PathSide{Path: drivers.TLS, Side: Side{Latency: Latency{P50: tls}}})
		return s
	}
	r := &Report{Targets: []Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}},
		Summary: []Summary{withTLS(summaryOf("floor", "", 17000, 11000), 30000), withTLS(summaryOf("echo", "", 22000, 15000), 36000),
			withTLS(summaryOf("redis", "", 40000, 30000), 55000)}}
	parts := Decompose(r)
	if len(parts) != 3 || parts[2].Transport != drivers.TLS || parts[2].Kernel != 30000 || parts[2].Client != 6000 || parts[2].Server != 19000 {
		t.Fatalf("%+v, want TCP, Unix and TLS split (TLS: 30 + 6 + 19 µs)", parts)
	}
	r.Summary[1].Sides = r.Summary[1].Sides[:2] // echo without TLS
	if parts := Decompose(r); len(parts) != 2 {
		t.Errorf("%+v, want TCP and Unix alone", parts)
	}
}

// TestDecomposeByPlacement: a run under two placements splits each
// placement's case by the floor and echo measured under that placement,
// never the other's.
func TestDecomposeByPlacement(t *testing.T) {
	placed := func(s Summary, p string) Summary { s.Case.Placement = p; return s }
	r := &Report{Targets: []Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}, {Name: "redis"}},
		Summary: []Summary{
			placed(summaryOf("floor", "", 10000, 8000), "same"), placed(summaryOf("floor", "", 60000, 55000), "split"),
			placed(summaryOf("echo", "", 12000, 9000), "same"), placed(summaryOf("echo", "", 70000, 64000), "split"),
			placed(summaryOf("redis", "", 15000, 11000), "same"), placed(summaryOf("redis", "", 80000, 72000), "split"),
		}}
	want := map[string]Decomposition{
		"same tcp":   {Kernel: 10000, Client: 2000, Server: 3000, Total: 15000},
		"same unix":  {Kernel: 8000, Client: 1000, Server: 2000, Total: 11000},
		"split tcp":  {Kernel: 60000, Client: 10000, Server: 10000, Total: 80000},
		"split unix": {Kernel: 55000, Client: 9000, Server: 8000, Total: 72000},
	}
	parts := Decompose(r)
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(parts), len(want), parts)
	}
	for _, d := range parts {
		key := d.Placement + " " + string(d.Transport)
		w, ok := want[key]
		if !ok || d.Kernel != w.Kernel || d.Client != w.Client || d.Server != w.Server || d.Total != w.Total {
			t.Errorf("%s: %+v, want %+v", key, d, w)
		}
	}
}

// TestDecomposeEachValueSize: a run that swept value sizes splits each
// size's case with its own p50 (the floor and echo are the same for
// both), and says which case each split is.
func TestDecomposeEachValueSize(t *testing.T) {
	sized := func(s Summary, size int) Summary { s.Case.ValueSize = size; return s }
	r := &Report{Targets: []Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}, {Name: "redis"}},
		Summary: []Summary{summaryOf("floor", "", 10000, 8000), summaryOf("echo", "", 12000, 9000),
			sized(summaryOf("redis", "", 15000, 11000), 16), sized(summaryOf("redis", "", 25000, 20000), 4096)}}
	want := map[string]float64{"16 tcp": 3000, "16 unix": 2000, "4096 tcp": 13000, "4096 unix": 11000} // the server's part: case - echo
	parts := Decompose(r)
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(parts), len(want), parts)
	}
	for _, d := range parts {
		key := fmt.Sprintf("%d %s", d.Case.ValueSize, d.Transport)
		if w, ok := want[key]; !ok || d.Server != w || d.Case.Target != "redis" {
			t.Errorf("%s: %+v, want the server's part %.0f ns", key, d, w)
		}
	}
}
