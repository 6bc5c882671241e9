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

// TestShiftSharesAddUp: with every layer moved, the shares add up to the
// change of the speedup, and each splits into its gap's and its level's
// parts. Worked by hand, from a (kernel 10/6, client 5/5, server 20/20 µs
// on TCP/Unix: B 35, P 31) to b (kernel 14/6, client 7/5, server 30/30: B
// 51, P 41): dB 16, dP 10;
//
//	I1 = ln(41/31)/10 = 0.0279585
//	I2 = 1.6 I1 + (35 - 16*31/10)/(31*41) = 0.0447336 - 0.0114870 = 0.0332466
//	kernel: dB 4, dP 0: 4 I1 = 0.111834 (gap 8/2 (I1+I2) = 0.122410, level 2 (I1-I2) = -0.010576)
//	client: dB 2, dP 0: 2 I1 = 0.055917
//	server: dB 10, dP 10: 10 (I1 - I2) = -0.052881, all of it its level's
//
// adding up to 51/41 - 35/31 = 0.114870; the kernel is named, by its gap.
func TestShiftSharesAddUp(t *testing.T) {
	s := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(14, 6, 7, 5, 30, 30))
	if s == nil {
		t.Fatal("no shift")
	}
	if math.Abs(s.Reference-35.0/31) > 1e-9 || math.Abs(s.Speedup-51.0/41) > 1e-9 {
		t.Errorf("speedups %v and %v, want 35/31 and 51/41", s.Reference, s.Speedup)
	}
	want := map[string][3]float64{LayerKernel: {0.111834, 0.122410, -0.010576}, LayerClient: {0.055917, 0.061205, -0.005288}, LayerServer: {-0.052881, 0, -0.052881}}
	sum := 0.0
	for _, x := range s.Shares {
		sum += x.Share
		w := want[x.Layer]
		if math.Abs(x.Share-w[0]) > 1e-6 || math.Abs(x.Gap-w[1]) > 1e-6 || math.Abs(x.Level-w[2]) > 1e-6 {
			t.Errorf("%s: share %.6f (gap %.6f, level %.6f), want %v", x.Layer, x.Share, x.Gap, x.Level, w)
		}
	}
	if math.Abs(sum-(s.Speedup-s.Reference)) > 1e-12 {
		t.Errorf("shares %+v add up to %v, want the change %v", s.Shares, sum, s.Speedup-s.Reference)
	}
	if s.Layer != LayerKernel || s.By != "gap" {
		t.Errorf("named %q by %q, want the kernel's gap", s.Layer, s.By)
	}
}

// TestShiftNamesTheLayerInTheDirectionOfTheChange: b's kernel gap widened
// (raising the speedup) and its server's work doubled (lowering it, more):
// the server is named, by its level. a: 10/6 + 5/5 + 20/20 = 35/31; b:
// 12/6 + 5/5 + 40/40 = 57/51; dB 22, dP 20: I1 = ln(51/31)/20 = 0.0248919,
// I2 = 1.1 I1 + (35 - 22*31/20)/(31*51) = 0.0279504; kernel 2 I1 =
// +0.049784, server 20 (I1 - I2) = -0.061169; the client did not move:
// its share is 0.
func TestShiftNamesTheLayerInTheDirectionOfTheChange(t *testing.T) {
	s := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(12, 6, 5, 5, 40, 40))
	want := map[string]float64{LayerKernel: 0.049784, LayerClient: 0, LayerServer: -0.061169}
	for _, x := range s.Shares {
		if math.Abs(x.Share-want[x.Layer]) > 1e-6 {
			t.Errorf("%s's share %.6f, want %.6f", x.Layer, x.Share, want[x.Layer])
		}
	}
	if s.Layer != LayerServer || s.By != "level" {
		t.Errorf("named %q by %q, want the server's level", s.Layer, s.By)
	}
	if same := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(10, 6, 5, 5, 20, 20)); same.Layer != "" || same.Shares[0].Share != 0 {
		t.Errorf("nothing moved, yet %q named: %+v", same.Layer, same.Shares)
	}
	if flat := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(12, 6, 5, 5, 20, 20)); math.Abs(flat.Shares[0].Share-2.0/31) > 1e-12 { // Unix's p50 did not move
		t.Errorf("only TCP's kernel moved, by 2 µs over Unix's 31: share %+v, want 2/31", flat.Shares[0])
	}
	if ShiftFrom(nil, layersOf(10, 6, 5, 5, 20, 20)) != nil || ShiftFrom(layersOf(1, 1, 1, 1, -9, -9), layersOf(10, 6, 5, 5, 20, 20)) != nil {
		t.Error("a shift from no layers, or from a p50 that is not positive")
	}
}

// TestShiftStaysFiniteWithNegativeLayers: the layers of two real runs
// (redis, placed shared on a and split on b: Go's runtime and the
// server's part negative on b), where taking b's client and server into
// a's sums leaves Unix a p50 of 0.1 µs. The shares stay within the
// speedups' own range and add up to the change.
func TestShiftStaysFiniteWithNegativeLayers(t *testing.T) {
	a, b := layersOf(23.3, 13.4, 7.6, 5.0, -0.2, 3.5), layersOf(90.4, 76.2, -12.2, -13.3, -4.4, -0.0)
	s := ShiftFrom(a, b)
	sum := 0.0
	for _, x := range s.Shares {
		sum += x.Share
		if math.Abs(x.Share) > 1 {
			t.Errorf("%s's share %.3f: the speedups are %.2f and %.2f", x.Layer, x.Share, s.Reference, s.Speedup)
		}
	}
	if math.Abs(sum-(s.Speedup-s.Reference)) > 1e-12 || s.Layer != LayerKernel || s.By != "level" {
		t.Errorf("%+v: want shares adding up to the change, the kernel's level named", s)
	}
}

// TestShiftNamesALayerThatMovedTheSpeedupItsWay: b's kernel and client
// gaps widened (raising the speedup) and its server's work tripled
// (lowering it): the speedup rose, and the kernel is named, though the
// server's share is the largest in size, the other way. a: 10/6 + 5/5 +
// 20/20 = 35/31; b: 15/6 + 9/5 + 60/60 = 84/71; dB 49, dP 40: I1 =
// ln(71/31)/40 = 0.0207173, I2 = (49/40) I1 + (35 - 49*31/40)/(31*71) =
// 0.0240271; kernel 5 I1 = +0.103587, client 4 I1 = +0.082869, server
// 40 (I1 - I2) = -0.132390; the change +0.054066.
func TestShiftNamesALayerThatMovedTheSpeedupItsWay(t *testing.T) {
	s := ShiftFrom(layersOf(10, 6, 5, 5, 20, 20), layersOf(15, 6, 9, 5, 60, 60))
	want := map[string]float64{LayerKernel: 0.103587, LayerClient: 0.082869, LayerServer: -0.132390}
	for _, x := range s.Shares {
		if math.Abs(x.Share-want[x.Layer]) > 1e-6 {
			t.Errorf("%s's share %.6f, want %.6f", x.Layer, x.Share, want[x.Layer])
		}
	}
	if s.Layer != LayerKernel || s.By != "gap" {
		t.Errorf("named %q by %q, want the kernel's gap", s.Layer, s.By)
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
