package results

import (
	"fmt"
	"strings"
)

// PlacementsDisagree warns that a case measured under several placements
// (Config.Placements) names a winner under one that another contradicts:
// where the client and the server run decides the answer.
const PlacementsDisagree WarningKind = "placements_disagree"

// PlacementsUnpinned warns that a target of a run whose placements auto
// chose was measured where the scheduler placed it: dbsock could not pin
// its server (a user's, or processes it does not see or may not pin).
const PlacementsUnpinned WarningKind = "placements_unpinned"

// direction is where a verdict points: +1 the path (the socket) faster,
// -1 the baseline, 0 no meaningful difference; ok is false for a verdict
// that points nowhere (undecided, too few instances, no result, a
// generator behind), which contradicts nothing.
func direction(k VerdictKind) (d int, ok bool) {
	switch k {
	case UnixFaster, PathFaster:
		return 1, true
	case TCPFaster, BaselineFaster:
		return -1, true
	case NoDifference:
		return 0, true
	}
	return 0, false
}

// comparePlacements warns, on each case measured under several
// placements, where one placement's verdict on a path names a winner that
// another's contradicts (the other winner, or no meaningful difference),
// giving every placement's verdict.
func (r *Report) comparePlacements() {
	if len(r.Config.Placements) < 2 {
		return
	}
	groups := map[Case][]int{}
	var order []Case
	for i, s := range r.Summary {
		if s.Placement == "" {
			continue
		}
		k := s.Case
		k.Placement = ""
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		for _, c := range r.Summary[idx[0]].Comparisons {
			if w := r.placementsOn(idx, c); w.Kind != "" {
				for _, i := range idx {
					r.Summary[i].Warnings = append(r.Summary[i].Warnings, w)
				}
			}
		}
	}
}

// placementsOn is the warning for comparison c (by its path) of the
// summaries idx, or none when their verdicts agree.
func (r *Report) placementsOn(idx []int, c Comparison) Warning {
	winner, contradicted := false, false
	var dirs []int
	var parts []string
	for _, i := range idx {
		s := &r.Summary[i]
		cmp := s.ComparisonOf(c.Path)
		if cmp == nil {
			return Warning{}
		}
		parts = append(parts, fmt.Sprintf("placed %s (%s): %s", PlacementName(s.Placement), r.placementCPUs(s.Placement), verdictWords(cmp)))
		if d, ok := direction(cmp.VerdictKind); ok {
			winner = winner || d != 0
			dirs = append(dirs, d)
		}
	}
	for _, a := range dirs {
		for _, b := range dirs {
			if a != 0 && a != b {
				contradicted = true
			}
		}
	}
	if !winner || !contradicted {
		return Warning{}
	}
	return Warn(PlacementsDisagree, "The placements give %s over %s different answers: %s. Which holds for you depends on where your application and its database run: on one CPU (a CPU-limited pod with a sidecar, a 1-vCPU machine) or on two (docs/method.md, CPU placement).",
		r.Summary[idx[0]].Target, c.Path, strings.Join(parts, "; "))
}

// placementCPUs says where placement mode m put the client and servers.
func (r *Report) placementCPUs(m string) string {
	for _, p := range r.Config.Placements {
		if p.Mode == m {
			if p.ClientCPUs == "" && p.ServerCPUs == "" {
				return "not pinned"
			}
			return "client CPU " + p.ClientCPUs + ", servers CPU " + p.ServerCPUs
		}
	}
	return "its CPUs not recorded"
}

// verdictWords is c's verdict in a few words, with its speedup and
// interval.
func verdictWords(c *Comparison) string {
	what := map[VerdictKind]string{UnixFaster: "the socket faster", PathFaster: "the path faster", TCPFaster: "TCP faster", BaselineFaster: "the baseline faster",
		NoDifference: "no meaningful difference"}[c.VerdictKind]
	if what == "" {
		what = "no winner"
	}
	s := fmt.Sprintf("%s, %.2f×", what, c.SpeedupP50)
	if ci := c.SpeedupP50CI; ci != nil {
		s += fmt.Sprintf(" (%.2f–%.2f)", ci.Lo, ci.Hi)
	}
	return s
}
