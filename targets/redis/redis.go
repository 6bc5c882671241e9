// Package redis registers the redis target: a GET of one key through
// go-redis v9.
package redis

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

const (
	name = "redis"
	Name = name // the target's name, for the hops in front of it
)

var external = targets.External{
	Product:      "Redis",
	SocketHelp:   "external Redis Unix socket path",
	PasswordFlag: true,
}

func init() {
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name), Volatile: true},
		Order:  20, InAll: true,
		Short:    "GET of one key",
		ServedBy: "redis-server, local, container or yours",
		Library:  "github.com/redis/go-redis/v9",
		Settings: func() targets.Settings { return DefaultSettings() },
		Flags: append(external.Flags(name),
			targets.Flag{Field: "Protocol", Name: "redis-protocol", Help: "RESP protocol version: 2 or 3"},
			targets.Flag{Field: "Identity", Name: "redis-identity", Help: "send go-redis's CLIENT SETINFO identity commands on connect"}),
		Help: targets.Help{Query: "a command with {key}, e.g. 'HGET user:{key} name'", KeysQuery: "a SCAN MATCH pattern",
			Update: "INCR", Pipeline: "go-redis pipeline"},
		Quiet: Quiet,
		Kind: &drivers.Kind{
			Pong: func(answer []byte) string {
				for _, p := range []string{"+PONG", "-NOAUTH", "-ERR"} {
					if strings.HasPrefix(string(answer), p) {
						return "a Redis server"
					}
				}
				return ""
			},
			SocketMode: "Redis: unixsocketperm 770 or 777",
		},
		Doctor: &targets.Doctor{
			Name:      "Redis",
			WellKnown: []string{"/run/redis/redis-server.sock", "/var/run/redis/redis-server.sock", "/var/run/redis/redis.sock", "/tmp/redis.sock"},
			Match:     func(base string) bool { return strings.Contains(base, name) || strings.Contains(base, "valkey") },
			Localhost: "clients use TCP (localhost:6379) unless given this path: redis-cli -s PATH, go-redis Network \"unix\".",
			Answer:    info,
		},
	})
}

// Settings are the redis target's settings (dbsock run's --redis-*
// flags).
type Settings struct {
	// Protocol is the RESP protocol version: 2 or 3.
	Protocol int `json:"protocol"`
	// Identity sends go-redis's CLIENT SETINFO identity commands on
	// connect.
	Identity bool `json:"identity"`
	// Server is a Redis the user runs (none by default).
	targets.Server `json:"-"`
}

// DefaultSettings are the redis target's settings at their defaults.
func DefaultSettings() *Settings {
	return &Settings{Protocol: 3, Server: external.Server(name)}
}

// Validate implements targets.Settings.
func (s *Settings) Validate() error {
	if s.Protocol != 2 && s.Protocol != 3 {
		return setting.Err("%s %d is not accepted; use 2 or 3", targets.Field(name, "Protocol"), s.Protocol)
	}
	return nil
}

// Driver implements targets.Settings.
func (s *Settings) Driver(w drivers.Workload) drivers.Driver {
	return New(s.Protocol, s.Identity, w)
}

// info asks INFO server without credentials.
func info(_ context.Context, c net.Conn, _ string) string {
	if _, err := io.WriteString(c, "INFO server\r\n"); err != nil {
		return "no answer: " + err.Error()
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "no answer: " + err.Error()
	}
	if strings.HasPrefix(line, "-") {
		if strings.Contains(line, "NOAUTH") {
			return "Redis (asks for a password before it says more)"
		}
		return "Redis error: " + strings.TrimSpace(line[1:])
	}
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return "Redis (version not read)"
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return "Redis " + v
		}
	}
}
