// Package haproxy registers HAProxy in TCP mode as a hop in front of the
// servers of other targets (Redis, MariaDB): one target per server it
// stands in front of, haproxy-TARGET, which "dbsock run TARGET --via
// haproxy" measures. dbsock starts the server by its own target's recipe
// (a local process, or its container) and HAProxy in front of it (a local
// process, or a container of dbsock/haproxy), with a frontend per route of two
// legs (the client's to HAProxy over 127.0.0.1 TCP or HAProxy's socket,
// HAProxy's to the server over the server's TCP address or its socket),
// and verifies each connection's legs from HAProxy's stats socket and
// from the server's own view of HAProxy's connection.
package haproxy

import (
	"encoding/json"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/mysql"
	"github.com/dbsock/dbsock/targets/redis"
)

const (
	// Via is the name --via takes; HAProxy's binary is called the same.
	Via    = "haproxy"
	binary = Via
)

// behind are the targets HAProxy stands in front of, each with its place
// in listings.
var behind = []struct {
	target string
	order  int
}{{redis.Name, 46}, {mysql.Name, 47}}

func init() {
	for _, b := range behind {
		targets.Register(hopTarget(b.target, b.order))
	}
}

// Name is the hop target's name in front of target's server.
func Name(target string) string { return Via + "-" + target }

// hopTarget is the target of HAProxy in front of target's server.
func hopTarget(target string, order int) targets.Target {
	in, ok := targets.Lookup(target)
	if !ok {
		panic("haproxy: no target " + target + " to stand in front of")
	}
	name, product := Name(target), productOf(in)
	serving := "HAProxy in TCP mode in front of " + product
	return targets.Target{
		Target: supply.Target{Name: name, Recipe: recipe(in, tcpLeg, unixLeg),
			Serving: serving, Hop: true,
			// The server's data lives as its own: a server that keeps none
			// across a restart (Redis) is seeded again, through HAProxy.
			SeedEach: in.SeedEach, Volatile: in.Volatile},
		Order:     order,
		InFrontOf: target,
		Via:       Via,
		Product:   "HAProxy",
		AgentsAs:  target,
		Short:     "the " + target + " lookup through HAProxy (TCP mode) in front of " + product,
		ServedBy:  "HAProxy in TCP mode with a " + product + " behind it, both started by dbsock (--via haproxy, --provider local or docker)",
		Library:   in.Library,
		Settings: func() targets.Settings {
			return &Settings{inner: in.Settings(), name: name, product: product}
		},
		Help:   in.Help,
		Agents: in.Agents,
	}
}

// recipe is HAProxy's in front of in's server, its backends tcp and unix
// at the endpoints tcp and unix pick: both local processes, or each in a
// container of its own (container.go).
func recipe(in *targets.Target, tcp, unix leg) supply.Recipe {
	return supply.Recipe{Local: localBehind(in.Name, tcp, unix), Container: container(in, tcp, unix)}
}

// productOf names target's server as its doctor does ("Redis").
func productOf(t *targets.Target) string {
	if t.Doctor != nil && t.Doctor.Name != "" {
		return t.Doctor.Name
	}
	return t.Name
}

// Settings are a haproxy target's: those of the target behind it at
// their defaults (its flags set that target's own), none of their own.
type Settings struct {
	inner         targets.Settings
	name, product string
}

// Validate implements targets.Settings.
func (s *Settings) Validate() error { return s.inner.Validate() }

// Driver implements targets.Settings: the driver of the target behind
// HAProxy, each connection verified on both legs.
func (s *Settings) Driver(w drivers.Workload) drivers.Driver {
	return Driver{Driver: s.inner.Driver(w), name: s.name, product: s.product}
}

// External implements targets.Settings: dbsock measures the legs of a
// HAProxy it starts only.
func (s *Settings) External() (supply.Pair, error) { return supply.Pair{}, nil }

// MarshalJSON writes the settings of the target behind HAProxy.
func (s *Settings) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(s.inner)
	if err != nil {
		return nil, fmt.Errorf("haproxy: the settings of %s's target: %w", s.name, err)
	}
	return b, nil
}

// UnmarshalJSON reads the settings of the target behind HAProxy.
func (s *Settings) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, s.inner) }
