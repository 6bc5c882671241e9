package main

import (
	"slices"

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
	return "a hop in front of the server: " + targets.HopPhrase() + "; TARGET --via HOP measures TARGET's server through a HOP dbsock starts " +
		"over the four routes of two legs (tcp-tcp, unix-tcp, tcp and unix), each compared with both legs on TCP, from --provider local (or docker where its image serves both legs)"
}

// applyVia is names with --via's hop put in front of the server it names:
// TARGET --via HOP is the HOP target (a hop in front of TARGET's server,
// targets.Target.InFrontOf) over the four routes of two legs, both on TCP
// the baseline, from the local provider (the one that serves a hop's
// legs).
func (o *runOptions) applyVia(names []string) ([]string, error) {
	if o.via == "" {
		return names, nil
	}
	h, ok := targets.Lookup(o.via)
	if !ok || !slices.Contains(targets.Hops(), h) {
		return nil, usagef("--via %q is not a hop dbsock can put in front of a server; the hops: %s", o.via, targets.HopPhrase())
	}
	if i := slices.IndexFunc(names, func(n string) bool { return n != h.InFrontOf }); i >= 0 {
		return nil, usagef("--via %s stands in front of %s only, not %s; run %s alone with it", o.via, h.InFrontOf, names[i], h.InFrontOf)
	}
	switch {
	case !o.flags.Changed("provider"):
		o.servers.provider = "local" // the one provider that serves the hop's legs
	case o.servers.provider == "docker" && h.Container != nil && h.Container.Hops != nil:
	case o.servers.provider != "local":
		return nil, usagef("--via %s with --provider %s: dbsock measures the legs of a %s it starts, on this host or in a container of its own; use --provider local%s", o.via, o.servers.provider, o.via, dockerToo(h))
	}
	if !o.flags.Changed("paths") {
		o.paths = slices.Clone(hopPaths)
	}
	if !o.flags.Changed("baseline") {
		o.baseline = hopBaseline
	}
	return []string{h.Name}, nil
}

// dockerToo is " or docker" where hop h's container names its legs.
func dockerToo(h *targets.Target) string {
	if h.Container != nil && h.Container.Hops != nil {
		return " or docker"
	}
	return ""
}
