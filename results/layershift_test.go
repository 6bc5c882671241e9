package results

import (
	"math"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// layersOf is TCP against Unix split into kernel, client and server, each
// given as its TCP and Unix parts (µs).
func layersOf(kt, ku, ct, cu, st, su float64) *Layers {
	return &Layers{Baseline: drivers.TCP, Path: drivers.Unix, Parts: []LayerPair{
		{LayerKernel, kt * 1e3, ku * 1e3}, {LayerClient, ct * 1e3, cu * 1e3}, {LayerServer, st * 1e3, su * 1e3}}}
}

// TestShiftSharesAddUp: with every layer moved, each share is the mean of
// its change over the six orders, and the shares add up to the change of
// the speedup. Worked by hand for the kernel, from a (kernel 10/6, client
// 5/5, server 20/20 µs on TCP/Unix: 35/31) to b (kernel 14/6, client 7/5,
// server 30/30: 51/41): the kernel's change is 2/6 of the orders taken
// first, 1/6 after the client, 1/6 after the server, 2/6 last:
// first 39/31-35/31 = 0.129032; after the client 41/31-37/31 = 0.129032;
// after the server 49/41-45/41 = 0.097561; last 51/41-47/41 = 0.097561;
// share 2/6*0.129032 + 1/6*0.129032 + 1/6*0.097561 + 2/6*0.097561 = 0.113297.
func TestShiftSharesAddUp(t *testing.T) {
	a, b := layersOf(10, 6, 5, 5, 20, 20), layersOf(14, 6, 7, 5, 30, 30)
	s := ShiftFrom(a, b)
	if s == nil {
		t.Fatal("no shift")
	}
	if math.Abs(s.Reference-35.0/31) > 1e-9 || math.Abs(s.Speedup-51.0/41) > 1e-9 {
		t.Errorf("speedups %v and %v, want 35/31 and 51/41", s.Reference, s.Speedup)
	}
	sum := 0.0
	for _, x := range s.Shares {
		sum += x.Share
	}
	if math.Abs(sum-(s.Speedup-s.Reference)) > 1e-12 {
		t.Errorf("shares %+v add up to %v, want the change %v", s.Shares, sum, s.Speedup-s.Reference)
	}
	if s.Shares[0].Layer != LayerKernel || math.Abs(s.Shares[0].Share-0.113297) > 1e-6 {
		t.Errorf("kernel's share %+v, want 0.113297", s.Shares[0])
	}
	if s.Layer != LayerKernel || s.By != "gap" {
		t.Errorf("named %q by %q, want the kernel's gap", s.Layer, s.By)
	}
}

// TestShiftNamesTheLayerInTheDirectionOfTheChange: b's kernel gap widened
// (raising the speedup) and its server's work doubled (lowering it, more):
// the server is named, by its level, though the kernel's share is nearly
// as large the other way. a: 10/6 + 5/5 + 20/20 = 35/31; b: 12/6 + 5/5 +
// 40/40 = 57/51. The client did not move: its share is 0.
func TestShiftNamesTheLayerInTheDirectionOfTheChange(t *testing.T) {
	s := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(12, 6, 5, 5, 40, 40))
	want := map[string]float64{LayerKernel: 0.051866, LayerClient: 0, LayerServer: -0.063251}
	for _, x := range s.Shares {
		if math.Abs(x.Share-want[x.Layer]) > 1e-6 {
			t.Errorf("%s's share %.6f, want %.6f", x.Layer, x.Share, want[x.Layer])
		}
	}
	if s.Layer != LayerServer || s.By != "level" {
		t.Errorf("named %q by %q, want the server's level", s.Layer, s.By)
	}
	if same := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(10, 6, 5, 5, 20, 20)); same.Layer != "" {
		t.Errorf("nothing moved, yet %q named", same.Layer)
	}
	if ShiftFrom(nil, layersOf(10, 6, 5, 5, 20, 20)) != nil || ShiftFrom(layersOf(1, 1, 1, 1, -9, -9), layersOf(10, 6, 5, 5, 20, 20)) != nil {
		t.Error("a shift from no layers, or from a mix with no positive p50")
	}
}

// TestLayersOf: a case's layers come from its own decomposition on the
// two paths; a case not split on both has none.
func TestLayersOf(t *testing.T) {
	r := &Report{Targets: []Target{{Name: "floor", Layer: drivers.LayerKernel}, {Name: "echo", Layer: drivers.LayerRuntime}, {Name: "redis"}},
		Summary: []Summary{summaryOf("floor", "", 10000, 6000), summaryOf("echo", "", 15000, 11000), summaryOf("redis", "", 35000, 31000)}}
	parts := Decompose(r)
	l := LayersOf(parts, r.Summary[2].Case, drivers.TCP, drivers.Unix)
	if l == nil || l.Speedup() != 35.0/31 || l.Parts[2] != (LayerPair{LayerServer, 20000, 20000}) {
		t.Fatalf("%+v, want 35/31 with the server's 20 µs on both", l)
	}
	if LayersOf(parts, r.Summary[2].Case, drivers.TCP, drivers.TLS) != nil {
		t.Error("layers on a path nothing split")
	}
}

// TestShiftNamesALayerThatMovedTheSpeedupItsWay: b's kernel and client
// gaps widened (raising the speedup) and its server's work tripled
// (lowering it): the speedup rose, and the kernel is named, though the
// server's share is the largest in size, the other way. a: 10/6 + 5/5 +
// 20/20 = 35/31; b: 15/6 + 9/5 + 60/60 = 84/71. The shares, over the six
// orders: kernel +0.115856, client +0.092685, server -0.154475; the change
// +0.054066.
func TestShiftNamesALayerThatMovedTheSpeedupItsWay(t *testing.T) {
	s := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(15, 6, 9, 5, 60, 60))
	want := map[string]float64{LayerKernel: 0.115856, LayerClient: 0.092685, LayerServer: -0.154475}
	for _, x := range s.Shares {
		if math.Abs(x.Share-want[x.Layer]) > 1e-6 {
			t.Errorf("%s's share %.6f, want %.6f", x.Layer, x.Share, want[x.Layer])
		}
	}
	if s.Layer != LayerKernel || s.By != "gap" {
		t.Errorf("named %q by %q, want the kernel's gap", s.Layer, s.By)
	}
}
