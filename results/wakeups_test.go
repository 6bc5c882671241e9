package results

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// cpuOf is CPU figures over ops with the client's and the server's totals.
func cpuOf(ops, clientCsw, serverNs int64) *CPU {
	return NewCPU(ops, 70_000*ops, clientCsw, &serverNs, nil, "test")
}

// TestSocketWakesClient: the figures of a load run on the AMD guest
// (36,000 ops a side): Go's pgx switched out 5.31 times per op over TCP
// and 6.35 over the socket while the server's CPU per op stayed at 56 µs;
// C's libpq 2.14 and 2.14 while the server's fell from 63.7 to 54.2 µs.
// Go's case gets the warning, with both counts and the server's figures;
// C's does not; nor does a rise under the thresholds, one whose server
// still saved a tenth of its CPU per op or more (Go at rest on one CPU:
// 1.17 and 1.58 per op, 15.1 and 12.0 µs), or one without the server's
// figures.
func TestSocketWakesClient(t *testing.T) {
	const ops = 36_000
	sum := func(tcp, unix *CPU) Summary {
		return Summary{Sides: []PathSide{{Path: drivers.TCP, Side: Side{N: ops, CPU: tcp}}, {Path: drivers.Unix, Side: Side{N: ops, CPU: unix}}}}
	}
	r := &Report{Summary: []Summary{
		sum(cpuOf(ops, 191_160, 56_169*ops), cpuOf(ops, 228_600, 56_310*ops)),                          // Go
		sum(cpuOf(ops, 77_040, 63_707*ops), cpuOf(ops, 77_040, 54_187*ops)),                            // C
		sum(cpuOf(ops, 36_000, 50_000*ops), cpuOf(ops, 42_000, 50_000*ops)),                            // +0.17 per op: under 0.2
		sum(cpuOf(ops, 360_000, 50_000*ops), cpuOf(ops, 370_800, 50_000*ops)),                          // +0.3 per op, but 3% of 10
		sum(cpuOf(ops, 42_120, 15_100*ops), cpuOf(ops, 56_880, 12_000*ops)),                            // at rest, shared: +0.41 per op, but 21% less server CPU
		sum(cpuOf(ops, 191_160, 56_169*ops), &CPU{Ops: ops, ClientCsw: 228_600, ClientCswPerOp: 6.35}), // no server figures: nothing to show
	}}
	r.explainWakeups()
	got := r.Summary[0].Warnings
	if len(got) != 1 || got[0].Kind != SocketWakesClient {
		t.Fatalf("Go's case: want one %s warning, got %v", SocketWakesClient, got)
	}
	for _, want := range []string{"The Unix socket woke this client more often than TCP:", "6.35 times per op over the socket against 5.31 over TCP (1.04 more",
		"the server spent 56.2µs of CPU per op over TCP and 56.3µs over the socket, no less", "Go's netpoller keeps each socket registered for write space"} {
		if !strings.Contains(got[0].String(), want) {
			t.Errorf("Go's warning lacks %q:\n%s", want, got[0])
		}
	}
	for i, s := range r.Summary[1:] {
		if len(s.Warnings) != 0 {
			t.Errorf("case %d: want no warning, got %v", i+1, s.Warnings)
		}
	}
}

// TestSavedWords: the server's saving in words, at and around the edges
// of "no less".
func TestSavedWords(t *testing.T) {
	for _, c := range []struct {
		b, u float64
		want string
	}{{63_707, 54_187, "15% less"}, {56_169, 56_310, "no less"}, {100, 99.6, "no less"}, {100, 99.4, "1% less"}, {100, 103, "3% more"}} {
		if got := savedWords(c.b, c.u); got != c.want {
			t.Errorf("savedWords(%v, %v) = %q, want %q", c.b, c.u, got, c.want)
		}
	}
}

// TestSocketWakesAnotherClient: the same counts from a client other than
// Go's get the counts and the server's figures, but the cause only as a
// possibility: it was traced for Go's client alone.
func TestSocketWakesAnotherClient(t *testing.T) {
	const ops = 36_000
	s := Summary{Case: Case{Stack: "node"}, Client: &Client{Language: "node"},
		Sides: []PathSide{{Path: drivers.TCP, Side: Side{N: ops, CPU: cpuOf(ops, 191_160, 56_169*ops)}}, {Path: drivers.Unix, Side: Side{N: ops, CPU: cpuOf(ops, 228_600, 56_310*ops)}}}}
	r := &Report{Summary: []Summary{s}}
	r.explainWakeups()
	if len(r.Summary[0].Warnings) != 1 {
		t.Fatalf("want one warning, got %v", r.Summary[0].Warnings)
	}
	w := r.Summary[0].Warnings[0].String()
	for _, want := range []string{"6.35 times per op over the socket against 5.31", "dbsock has traced that for Go's client, not for this one"} {
		if !strings.Contains(w, want) {
			t.Errorf("node's warning lacks %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "Go's netpoller keeps each socket") {
		t.Errorf("node's warning names Go's cause as its own:\n%s", w)
	}
}
