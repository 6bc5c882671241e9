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
// The method: a layer's share is the change of the speedup when that
// layer alone is taken from the reference host into the other host's
// sums, averaged over every order in which the layers can be taken one at
// a time (the Shapley value of each layer in the game whose value is the
// speedup of the sums: L. S. Shapley, "A value for n-person games", 1953). Taken in any one order the layers' changes add up
// to the whole change; averaged over every order each layer's share is
// independent of the order, and the shares still add up to the whole
// change. With three layers that is six orders, each a sum of two paths'
// p50s rebuilt from its parts.

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

// LayerShare is one layer's share of the change of the speedup.
type LayerShare struct {
	Layer string  `json:"layer"`
	Share float64 `json:"share"`
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
	// By says what of Layer moved the speedup more, taken alone from the
	// reference into this host's sums: "gap", what the baseline's part
	// costs over the path's, or "level", the part's mean over both paths,
	// which both pay.
	By string `json:"by,omitempty"`
}

// ShiftFrom shares the change of the speedup from ref's layers to l's
// among the layers; nil where the two are not split into the same layers
// or some mix of them has no positive p50 on the path.
func ShiftFrom(ref, l *Layers) *Shift {
	n := len(l.Parts)
	if ref == nil || len(ref.Parts) != n || n == 0 || n > 8 {
		return nil
	}
	for i := range l.Parts {
		if ref.Parts[i].Layer != l.Parts[i].Layer {
			return nil
		}
	}
	value := make([]float64, 1<<n) // the speedup with the layers of mask from l, the rest from ref
	for mask := range value {
		mix := Layers{Parts: make([]LayerPair, n)}
		for i := range mix.Parts {
			mix.Parts[i] = ref.Parts[i]
			if mask&(1<<i) != 0 {
				mix.Parts[i] = l.Parts[i]
			}
		}
		if value[mask] = mix.Speedup(); value[mask] <= 0 {
			return nil
		}
	}
	s := &Shift{Reference: value[0], Speedup: value[len(value)-1]}
	for i, p := range l.Parts {
		share := 0.0
		for mask := range value {
			if mask&(1<<i) == 0 {
				k := popcount(mask)
				share += orderWeight(k, n) * (value[mask|1<<i] - value[mask])
			}
		}
		s.Shares = append(s.Shares, LayerShare{Layer: p.Layer, Share: share})
	}
	if i := s.named(); i >= 0 {
		s.Layer, s.By = s.Shares[i].Layer, gapOrLevel(ref, l, i)
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

// orderWeight is the share of the orders of n layers in which a given
// layer is taken right after k others: k! (n-k-1)! / n!.
func orderWeight(k, n int) float64 {
	return factorial(k) * factorial(n-k-1) / factorial(n)
}

func factorial(n int) float64 {
	f := 1.0
	for i := 2; i <= n; i++ {
		f *= float64(i)
	}
	return f
}

func popcount(m int) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// gapOrLevel says what of layer i, taken alone from ref into l's sums,
// moves l's speedup more: its gap (the baseline's part minus the path's)
// or its level (their mean, which both paths pay).
func gapOrLevel(ref, l *Layers, i int) string {
	with := func(level, gap float64) float64 {
		mix := Layers{Parts: append([]LayerPair(nil), l.Parts...)}
		mix.Parts[i].Baseline, mix.Parts[i].Path = level+gap/2, level-gap/2
		return mix.Speedup()
	}
	r, h := ref.Parts[i], l.Parts[i]
	level, gap := (h.Baseline+h.Path)/2, h.Baseline-h.Path
	refLevel, refGap := (r.Baseline+r.Path)/2, r.Baseline-r.Path
	s := l.Speedup()
	byGap, byLevel := math.Abs(s-with(level, refGap)), math.Abs(s-with(refLevel, gap))
	if byGap >= byLevel {
		return "gap"
	}
	return "level"
}
