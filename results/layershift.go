package results

import (
	"math"

	"github.com/dbsock/dbsock/drivers"
)

// Where two hosts' speedups part: each host's p50 on a pair of paths split
// into its layers (Decompose), and the change of the speedup, the
// baseline's p50 over the path's, from a reference host to another shared
// among the layers.
//
// The method: every layer moves from the reference host's value to the
// other host's together, along the straight line between them, and each
// layer is credited with the change of the speedup its own move makes at
// every point of the way (the Aumann-Shapley value: R. J. Aumann and L. S.
// Shapley, "Values of Non-Atomic Games", 1974, the continuous form of the
// Shapley value). With B and P the two p50s, S = B/P, the change from the
// reference (Ba, Pa) to the host (Bb, Pb) is the integral over t from 0 to
// 1 of dB/P(t) - B(t) dP/P(t)^2, and layer i's share is
//
//	dB_i * I1 - dP_i * I2,  I1 = ∫ dt/P(t) = ln(Pb/Pa)/dP,
//	                        I2 = ∫ B(t)/P(t)^2 dt = (dB/dP) I1 + (Ba - dB Pa/dP)/(Pa Pb)
//
// (dP = 0: I1 = 1/Pa, I2 = (Ba + dB/2)/Pa^2). The shares add up to the
// whole change, a layer that did not move has none, and a layer's share
// splits in two that add up to it: its gap's, what it costs on the
// baseline over the path (dg/2 (I1 + I2)), and its level's, its mean over
// both paths, which both pay (dm (I1 - I2)).
//
// Taking the layers from the reference into the host's sums one at a time
// (the discrete Shapley value, averaged over the orders) is not used: a
// layer can be negative (Go's runtime answers faster than the floor's
// blocking client when the server runs on another CPU), and a mix of one
// host's layers with the other's can then add up to a path's p50 near 0,
// whose ratio, and every share, explodes (two redis runs on this project's
// machine, placed shared and split, gave shares of -40.6, +20.6 and +19.8
// for a change of -0.22). Along the straight line P(t) stays between the
// two hosts' measured p50s.

// The layers a p50 is split into, in the order of Layers.Parts.
const (
	LayerKernel = "kernel" // the kernel floor
	LayerClient = "client" // the client stack's own round trip above it
	LayerServer = "server" // the server's work and protocol
)

// LayerPair is one layer's part of the p50 on a row's two paths (ns).
type LayerPair struct {
	Layer    string  `json:"layer"`
	Baseline float64 `json:"baseline_ns"`
	Path     float64 `json:"path_ns"`
}

// Layers is a case's p50 on its baseline and on a path, each split into
// the same layers, which add up to the p50 on each.
type Layers struct {
	Baseline drivers.Transport `json:"baseline"`
	Path     drivers.Transport `json:"path"`
	Parts    []LayerPair       `json:"parts"`
}

// Sums are the layers' sums on the baseline and on the path: the two
// p50s.
func (l *Layers) Sums() (base, path float64) {
	for _, p := range l.Parts {
		base += p.Baseline
		path += p.Path
	}
	return base, path
}

// Speedup is the baseline's p50 over the path's, as the layers add them
// up (0 where the path's is not positive).
func (l *Layers) Speedup() float64 {
	base, path := l.Sums()
	if path <= 0 {
		return 0
	}
	return base / path
}

// LayersOf are case c's layers on base and path among parts (Decompose's),
// nil where either path was not split.
func LayersOf(parts []Decomposition, c Case, base, path drivers.Transport) *Layers {
	var b, p *Decomposition
	for i := range parts {
		d := &parts[i]
		if d.Case != c {
			continue
		}
		switch d.Transport {
		case base:
			b = d
		case path:
			p = d
		}
	}
	if b == nil || p == nil {
		return nil
	}
	return &Layers{Baseline: base, Path: path, Parts: []LayerPair{
		{LayerKernel, b.Kernel, p.Kernel}, {LayerClient, b.Client, p.Client}, {LayerServer, b.Server, p.Server}}}
}

// LayerShare is one layer's share of the change of the speedup, and the
// parts of it its gap's and its level's move made.
type LayerShare struct {
	Layer string  `json:"layer"`
	Share float64 `json:"share"`
	Gap   float64 `json:"gap"`
	Level float64 `json:"level"`
}

// Shift is how a host's speedup moved from the reference host's, shared
// among the layers (the method above).
type Shift struct {
	// Reference and Speedup are the reference host's and this host's
	// speedups as their layers add them up.
	Reference float64      `json:"reference_speedup"`
	Speedup   float64      `json:"speedup"`
	Shares    []LayerShare `json:"shares"`
	// Layer is the layer with the largest share in the direction the
	// speedup moved ("" where nothing moved).
	Layer string `json:"layer"`
	// By says which part of Layer's share is the larger: "gap", what the
	// baseline's part costs over the path's, or "level", the part's mean
	// over both paths, which both pay.
	By string `json:"by,omitempty"`
}

// ShiftFrom shares the change of the speedup from ref's layers to l's
// among the layers; nil where the two are not split into the same layers
// or either's p50 on the path is not positive.
func ShiftFrom(ref, l *Layers) *Shift {
	if ref == nil || l == nil || len(ref.Parts) != len(l.Parts) || len(l.Parts) == 0 {
		return nil
	}
	for i := range l.Parts {
		if ref.Parts[i].Layer != l.Parts[i].Layer {
			return nil
		}
	}
	ba, pa := ref.Sums()
	bb, pb := l.Sums()
	if pa <= 0 || pb <= 0 {
		return nil
	}
	db, dp := bb-ba, pb-pa
	i1, i2 := 1/pa, (ba+db/2)/(pa*pa)
	if math.Abs(dp) > 1e-9*pa {
		i1 = math.Log(pb/pa) / dp
		i2 = db/dp*i1 + (ba-db*pa/dp)/(pa*pb)
	}
	s := &Shift{Reference: ba / pa, Speedup: bb / pb}
	for i, p := range l.Parts {
		r := ref.Parts[i]
		dm := (p.Baseline + p.Path - r.Baseline - r.Path) / 2
		dg := (p.Baseline - p.Path) - (r.Baseline - r.Path)
		gap, level := dg/2*(i1+i2), dm*(i1-i2)
		s.Shares = append(s.Shares, LayerShare{Layer: p.Layer, Share: gap + level, Gap: gap, Level: level})
	}
	if i := s.named(); i >= 0 {
		s.Layer, s.By = s.Shares[i].Layer, "gap"
		if math.Abs(s.Shares[i].Level) > math.Abs(s.Shares[i].Gap) {
			s.By = "level"
		}
	}
	return s
}

// named is the index of the layer with the largest share in the direction
// the speedup moved (the largest share in size where it did not move), -1
// where no layer has a share.
func (s *Shift) named() int {
	sign := math.Copysign(1, s.Speedup-s.Reference)
	best, at := 0.0, -1
	for i, x := range s.Shares {
		v := x.Share * sign
		if s.Speedup == s.Reference {
			v = math.Abs(x.Share)
		}
		if v > best {
			best, at = v, i
		}
	}
	return at
}
