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
		var err error
		if names, err = o.viaOnly(names); err != nil || o.via == "" {
			return names, err
		}
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
	if !o.flags.Changed("baseline") && slices.Contains(o.paths, hopBaseline) {
		o.baseline = hopBaseline // else the baseline's default, among --paths
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

// viaOnly is names as --via would name them where they name hops that
// serve neither tcp nor unix (targets.Target.ViaOnly): "dbsock run
// twemproxy-redis" is run as "dbsock run redis --via twemproxy", which
// measures the routes it serves; o.via is set then. Such a hop named
// beside other targets, or beside hops of another kind, is refused.
func (o *runOptions) viaOnly(names []string) ([]string, error) {
	var via string
	var fronts, others []string
	for _, n := range names {
		t, ok := targets.Lookup(n)
		if !ok || !t.ViaOnly {
			others = append(others, n)
			continue
		}
		if via != "" && t.ViaName() != via {
			return nil, usagef("%s and %s are measured through different hops (--via %s, --via %s): run each on its own", fronts[0], n, via, t.ViaName())
		}
		via, fronts = t.ViaName(), append(fronts, t.InFrontOf)
	}
	switch {
	case via == "":
		return names, nil
	case len(others) > 0:
		hop := names[slices.IndexFunc(names, func(n string) bool { return !slices.Contains(others, n) })]
		return nil, usagef("%s is measured over its hop's routes only (its leg to the server is never the server's socket); run it apart from %s: dbsock run %s --via %s", hop, strings.Join(others, ", "), strings.Join(fronts, " "), via)
	}
	o.via = via
	return fronts, nil
}
