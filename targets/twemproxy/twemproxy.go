// Package twemproxy registers twemproxy (nutcracker) as a hop in front of
// Redis: the target twemproxy-redis, which "dbsock run redis --via
// twemproxy" measures. dbsock starts Redis by its own target's local
// recipe and nutcracker in front of it, with a pool for each route of the
// client's leg (127.0.0.1 TCP, or a socket in nutcracker's private
// directory), each pool reaching Redis over 127.0.0.1 TCP: nutcracker
// reaches its servers over TCP only, so the routes whose leg to Redis is
// its socket (tcp and unix) are not served, and the report says why. Each
// connection's legs are verified from nutcracker's stats (the pool that
// counted its requests) and from Redis's own list of its clients.
package twemproxy

import (
	"encoding/json"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/redis"
)

const (
	// Via is the name --via takes; binary is twemproxy's, nutcracker.
	Via     = "twemproxy"
	binary  = "nutcracker"
	product = "twemproxy"
)

func init() {
	targets.Register(hopTarget(redis.Name, 48))
}

// Name is the hop target's name in front of target's server.
func Name(target string) string { return Via + "-" + target }

// hopTarget is the target of nutcracker in front of target's server.
func hopTarget(target string, order int) targets.Target {
	in, ok := targets.Lookup(target)
	if !ok {
		panic("twemproxy: no target " + target + " to stand in front of")
	}
	name, server := Name(target), productOf(in)
	return targets.Target{
		Target: supply.Target{Name: name, Recipe: supply.Recipe{Local: localBehind(target, pools)},
			Serving: "twemproxy (nutcracker) in front of " + server, Hop: true,
			// Redis keeps no data across a restart: seeded again, through
			// nutcracker.
			SeedEach: in.SeedEach, Volatile: in.Volatile},
		Order:     order,
		InFrontOf: target,
		ViaOnly:   true, // its leg to the server is TCP on every route (noSocketLeg)
		Via:       Via,
		Product:   product,
		AgentsAs:  target,
		Short:     "the " + target + " lookup through twemproxy (nutcracker) in front of " + server + ", its leg to " + server + " on TCP only",
		ServedBy:  "twemproxy (nutcracker) with a " + server + " behind it, both started by dbsock (--via twemproxy, --provider local)",
		Library:   in.Library,
		Settings: func() targets.Settings {
			s, _ := in.Settings().(*redis.Settings)
			if s == nil {
				s = redis.DefaultSettings()
			}
			s.Protocol = 2 // nutcracker speaks RESP2 alone
			return &Settings{inner: s, name: name, server: server}
		},
		Help:   in.Help,
		Agents: in.Agents,
	}
}

// productOf names target's server as its doctor does ("Redis").
func productOf(t *targets.Target) string {
	if t.Doctor != nil && t.Doctor.Name != "" {
		return t.Doctor.Name
	}
	return t.Name
}

// Settings are a twemproxy target's: those of the Redis target behind it
// at their defaults, in RESP2 (nutcracker closes a connection that sends
// HELLO), none of their own.
type Settings struct {
	inner        *redis.Settings
	name, server string
}

// Validate implements targets.Settings.
func (s *Settings) Validate() error {
	if s.inner.Protocol != 2 || s.inner.Identity {
		return setting.Err("%s: twemproxy speaks RESP2 alone and takes no CLIENT SETINFO (protocol %d, identity %v asked); leave the protocol at 2 and the identity off",
			s.name, s.inner.Protocol, s.inner.Identity)
	}
	return s.inner.Validate()
}

// Driver implements targets.Settings: the Redis driver in RESP2, its
// connections' HELLO answered on the client's side (nutcracker closes a
// connection that sends one), each connection verified on both legs.
func (s *Settings) Driver(w drivers.Workload) drivers.Driver {
	d := redis.New(s.inner.Protocol, s.inner.Identity, w).WithoutHello()
	return Driver{Driver: d, name: s.name, server: s.server, w: w}
}

// External implements targets.Settings: dbsock measures the legs of a
// nutcracker it starts only.
func (s *Settings) External() (supply.Pair, error) { return supply.Pair{}, nil }

// MarshalJSON writes the settings of the target behind nutcracker.
func (s *Settings) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(s.inner)
	if err != nil {
		return nil, fmt.Errorf("twemproxy: the settings of %s's target: %w", s.name, err)
	}
	return b, nil
}

// UnmarshalJSON reads the settings of the target behind nutcracker.
func (s *Settings) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, s.inner) }
