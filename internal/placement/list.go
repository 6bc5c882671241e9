package placement

import (
	"slices"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
)

// Shared is the name --placement also takes for "same": client and
// servers share CPU 0, as a CPU-limited pod with a sidecar or a 1-vCPU
// machine has them.
const Shared = "shared"

// A run may measure its cases under several placements (--placement
// shared,split), each a case of its own whose blocks are paired as any
// case's, the placements taking turns on every server instance: the
// servers dbsock starts are re-pinned, and dbsock's client with the agents
// it starts, before each placement's turn.

// ResolveList is Resolve for a comma-separated list of modes: one mode is
// Resolve's; several must each be named (same or shared, split, none),
// none twice, and take no explicit CPU lists.
func ResolveList(modes, clientList, serverList string, resolve func(mode, clientList, serverList string) (Placement, error)) ([]Placement, error) {
	names := strings.Split(modes, ",")
	if len(names) == 1 {
		p, err := resolve(normal(modes), clientList, serverList)
		return []Placement{p}, err
	}
	if clientList != "" || serverList != "" {
		return nil, setting.Err("%s %s measures each placement as it is named: leave out %s and %s, or give one placement", setting.Placement, modes, setting.ClientCPU, setting.ServerCPU)
	}
	var out []Placement
	for _, n := range names {
		n = normal(strings.TrimSpace(n))
		switch {
		case n == "auto" || n == "":
			return nil, setting.Err("%s %s: name each placement of a list (%s, split, none): auto is no placement of its own, it chooses them", setting.Placement, modes, Shared)
		case slices.ContainsFunc(out, func(p Placement) bool { return p.Mode == n }):
			return nil, setting.Err("%s %s names %s twice", setting.Placement, modes, n)
		}
		p, err := resolve(n, "", "")
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// normal is mode's name among Modes (shared is same).
func normal(mode string) string {
	if mode == Shared {
		return "same"
	}
	return mode
}

// ServerUnion is every CPU a server is pinned to under some placement of
// ps (nil when one leaves servers unpinned): the CPUs a server container
// must be allowed, so that each placement can pin its processes.
func ServerUnion(ps []Placement) []int {
	var out []int
	for _, p := range ps {
		if len(p.Server) == 0 {
			return nil
		}
		for _, c := range p.Server {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}
