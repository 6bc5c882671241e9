package memcached

import (
	"context"
	"net"
	"strings"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// name is the target's name; the server, its binary and its product are
// all called the same.
const (
	name    = "memcached"
	server  = name
	product = name
)

var external = targets.External{
	Product:    product,
	SocketHelp: "external memcached Unix socket path (memcached -s: a second instance, as memcached serves a socket only with TCP off)",
}

func init() {
	targets.Register(targets.Target{
		Agents: &agents.Support{
			NoTLS: "memcached's stats conns does not say whether another connection is encrypted, so dbsock could not verify an agent's TLS",
		},
		Target: supply.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name),
			Serving: perTransport, SeedEach: true, Volatile: true},
		Order:    25,
		Short:    "GET of one key (memcached: one instance per transport)",
		ServedBy: "memcached, two instances started alike (-p for TCP, -s for the socket), local, container or yours",
		Library:  "github.com/bradfitz/gomemcache",
		Settings: func() targets.Settings { return DefaultSettings() },
		Flags:    external.Flags(name),
		Help:     targets.Help{Query: "a command with {key}, e.g. 'get user:{key}'", Update: "incr"},
		Kind: &drivers.Kind{Pong: func(answer []byte) string {
			if strings.HasPrefix(string(answer), "ERROR") {
				return "a memcached server"
			}
			return ""
		}},
		Doctor: &targets.Doctor{
			Name:      product,
			WellKnown: []string{"/run/memcached/memcached.sock", "/var/run/memcached/memcached.sock", "/tmp/memcached.sock"},
			Match:     func(base string) bool { return strings.Contains(base, name) },
			Localhost: "clients use TCP (localhost:11211) unless given this path; memcached serves a socket only with TCP off (-s).",
			Answer:    version,
		},
	})
}

// Settings are the memcached target's settings: a memcached the user runs
// (dbsock run's --memcached-* flags), none by default.
type Settings struct {
	targets.Server `json:"-"`
}

// DefaultSettings are the memcached target's settings at their defaults.
func DefaultSettings() *Settings { return &Settings{Server: external.Server(name)} }

// Validate implements targets.Settings.
func (*Settings) Validate() error { return nil }

// Driver implements targets.Settings.
func (*Settings) Driver(w drivers.Workload) drivers.Driver { return New(w) }

// version asks the version command, which needs no credentials.
func version(_ context.Context, c net.Conn, _ string) string {
	line, err := command(c, "version")
	if err != nil {
		return "no answer: " + err.Error()
	}
	if v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION "); ok {
		return "memcached " + v
	}
	return "not memcached: " + strings.TrimSpace(line)
}
