package main

import (
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// hops are what --via may put in front of a target's server: the hop's
// name, the target it stands in front of, and the target that measures
// the two together (its routes of two legs: drivers.PathInfo.Hop).
var hops = map[string]struct{ front, target string }{
	"pgbouncer": {front: "postgres", target: "pgbouncer"},
}

// hopPaths are the four routes of two legs, and the one with both on TCP
// that --via compares the others with unless --paths or --baseline say
// otherwise.
var hopPaths = []string{string(drivers.TCP), string(drivers.Unix), string(drivers.TCPHopTCP), string(drivers.UnixHopTCP)}

const hopBaseline = string(drivers.TCPHopTCP)

// applyVia is names with --via's hop put in front of the server it names:
// postgres --via pgbouncer is the pgbouncer target over the four routes of
// two legs, both on TCP the baseline, from the local provider (the one
// that serves a hop's legs).
func (o *runOptions) applyVia(names []string) ([]string, error) {
	if o.via == "" {
		return names, nil
	}
	h, ok := hops[o.via]
	if !ok {
		return nil, usagef("--via %q is not a hop dbsock can put in front of a server; use pgbouncer (in front of postgres)", o.via)
	}
	if i := slices.IndexFunc(names, func(n string) bool { return n != h.front }); i >= 0 {
		return nil, usagef("--via %s stands in front of %s only, not %s; run %s alone with it", o.via, h.front, strings.Join(names[i:i+1], ""), h.front)
	}
	switch {
	case !o.flags.Changed("provider"):
		o.servers.provider = "local" // the one provider that serves the hop's legs
	case o.servers.provider != "local":
		return nil, usagef("--via %s with --provider %s: dbsock measures the legs of a %s it starts on this host only; use --provider local", o.via, o.servers.provider, o.via)
	}
	if !o.flags.Changed("paths") {
		o.paths = slices.Clone(hopPaths)
	}
	if !o.flags.Changed("baseline") {
		o.baseline = hopBaseline
	}
	return []string{h.target}, nil
}
