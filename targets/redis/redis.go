// Package redis registers the redis target: a GET of one key through
// go-redis v9.
package redis

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

const name = "redis"

var external = targets.External{
	Product:      "Redis",
	SocketHelp:   "external Redis Unix socket path",
	PasswordFlag: true,
}

func init() {
	targets.Register(targets.Target{
		Target: compose.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name), Volatile: true},
		Order:  20, InAll: true,
		Short:    "GET of one key",
		ServedBy: "redis-server, local, container or yours",
		Library:  "github.com/redis/go-redis/v9",
		Settings: bind,
		Quiet:    Quiet,
		Doctor: &targets.Doctor{
			Name:      "Redis",
			WellKnown: []string{"/run/redis/redis-server.sock", "/var/run/redis/redis-server.sock", "/var/run/redis/redis.sock", "/tmp/redis.sock"},
			Match:     func(base string) bool { return strings.Contains(base, name) || strings.Contains(base, "valkey") },
			Localhost: "clients use TCP (localhost:6379) unless given this path: redis-cli -s PATH, go-redis Network \"unix\".",
			Answer:    info,
		},
	})
}

type settings struct {
	protocol int
	identity bool
	ext      *targets.ExternalFlags
}

func bind(f *pflag.FlagSet) targets.Settings {
	s := &settings{protocol: 3, ext: external.Bind(f, name)}
	if f != nil {
		f.IntVar(&s.protocol, "redis-protocol", 3, "RESP protocol version: 2 or 3")
		f.BoolVar(&s.identity, "redis-identity", false, "send go-redis's CLIENT SETINFO identity commands on connect")
	}
	return s
}

func (s *settings) Validate() error {
	if s.protocol != 2 && s.protocol != 3 {
		return fmt.Errorf("--redis-protocol %d is not accepted; use 2 or 3", s.protocol)
	}
	return nil
}

func (s *settings) Driver(w drivers.Workload) drivers.Driver {
	return New(s.protocol, s.identity, w)
}

func (s *settings) External() (compose.Pair, error) { return s.ext.Pair() }

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
