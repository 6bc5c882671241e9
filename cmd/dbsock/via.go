package main

import (
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

// hopPaths are the four routes of two legs, and the one with both on TCP
// that --via compares the others with unless --paths or --baseline say
// otherwise.
var hopPaths = []string{string(drivers.TCP), string(drivers.Unix), string(drivers.TCPHopTCP), string(drivers.UnixHopTCP)}

const hopBaseline = string(drivers.TCPHopTCP)

// viaHelp is --via's help, naming the hops the targets register.
func viaHelp() string {
	return "a hop in front of the server: " + targets.HopPhrase() + "; TARGET... --via HOP measures each TARGET's server through a HOP dbsock starts " +
		"over the four routes of two legs (tcp-tcp, unix-tcp, tcp and unix), each compared with both legs on TCP, from --provider local (or docker where its image serves both legs)"
}

// applyVia is names with --via's hop put in front of the servers they
// name: TARGET --via HOP is the hop target that stands in front of
// TARGET's server (targets.HopVia: targets.Target.InFrontOf, one such
// target per server when a hop stands in front of several) over the four
// routes of two legs, both on TCP the baseline, from the local provider
// (the one that serves a hop's legs).
func (o *runOptions) applyVia(names []string) ([]string, error) {
	if o.via == "" {
		return names, nil
	}
	var fronts, hops []string
	var chosen []*targets.Target
	for _, h := range targets.Hops() {
		if h.ViaName() == o.via {
			fronts = append(fronts, h.InFrontOf)
		}
	}
	if len(fronts) == 0 {
		return nil, usagef("--via %q is not a hop dbsock can put in front of a server; the hops: %s", o.via, targets.HopPhrase())
	}
	for _, n := range names {
		h, ok := targets.HopVia(o.via, n)
		if !ok {
			return nil, usagef("--via %s stands in front of %s only, not %s; run %s with it", o.via, strings.Join(fronts, " or "), n, strings.Join(fronts, " or "))
		}
		hops, chosen = append(hops, h.Name), append(chosen, h)
	}
	switch {
	case !o.flags.Changed("provider"):
		o.servers.provider = "local" // the one provider that serves the hop's legs
	case o.servers.provider == "docker" && containersNameLegs(chosen):
	case o.servers.provider != "local":
		return nil, usagef("--via %s with --provider %s: dbsock measures the legs of a %s it starts, on this host or in a container of its own; use --provider local%s", o.via, o.servers.provider, o.via, dockerToo(chosen))
	}
	if !o.flags.Changed("paths") {
		o.paths = slices.Clone(hopPaths)
	}
	if !o.flags.Changed("baseline") {
		o.baseline = hopBaseline
	}
	return hops, nil
}

// containersNameLegs says whether every hop of hs names its legs in its
// container (supply.Container.Hops), so the docker provider serves them.
func containersNameLegs(hs []*targets.Target) bool {
	return !slices.ContainsFunc(hs, func(h *targets.Target) bool { return h.Container == nil || h.Container.Hops == nil })
}

// dockerToo is " or docker" where every hop of hs names its legs in its
// container.
func dockerToo(hs []*targets.Target) string {
	if containersNameLegs(hs) {
		return " or docker"
	}
	return ""
}
