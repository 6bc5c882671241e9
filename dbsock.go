// Package dbsock measures how your own database code performs over a Unix
// domain socket versus TCP on 127.0.0.1, with the servers, the timing loop
// and the paired statistics of the dbsock command.
//
// Start a server with both endpoints (or take a server you run with
// External), point your client at either one
// (MySQLConfig, PostgresConfig, RedisOptions, MongoOptions,
// MemcachedServer), and Compare runs your operation over both transports
// in interleaved block pairs and returns the same Report that
// "dbsock run --format json" writes:
//
//	srv, err := dbsock.Start(ctx, "mysql", dbsock.StartOptions{})
//	if err != nil { ... }
//	defer srv.Close()
//	rep, err := dbsock.Compare(ctx, srv, "my-query", open, dbsock.CompareOptions{})
//	s := rep.Summary[0] // s.UnixSpeedupP50, s.UnixSpeedupP50CI, s.VerdictKind
//
// Package dbsocktest wraps Start for tests (it skips when no server can be
// had, and closes it in t.Cleanup) and runs an operation as
// sub-benchmarks transport=tcp and transport=unix, for benchstat.
package dbsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/targets"
	_ "github.com/dbsock/dbsock/targets/all" // every target registers itself
	"github.com/dbsock/dbsock/targets/mongo"
	"github.com/dbsock/dbsock/targets/mysql"
	"github.com/dbsock/dbsock/targets/postgres"
	"github.com/dbsock/dbsock/targets/redis"
)

// Endpoint is one way to reach a server: a transport (TCP or Unix), an
// address (host:port, or a socket path) and credentials.
type Endpoint = drivers.Endpoint

// Transport is TCP (127.0.0.1) or Unix (a Unix domain socket).
type Transport = drivers.Transport

// The two transports.
const (
	TCP  = drivers.TCP
	Unix = drivers.Unix
)

// Report is a measurement as "dbsock run --format json" writes it: its
// Summary holds one entry per case with both transports' latencies, the
// paired speedup and its interval, and the verdict. WriteJSON writes it;
// package reports renders it as Markdown, HTML or CSV.
type Report = results.Report

// Summary is one case of a Report.
type Summary = results.Summary

// ErrUnavailable is wrapped by Start's error when no server of the target
// can be had here (no server binaries installed, no Docker engine, no
// image): a test may skip then.
var ErrUnavailable = compose.ErrCannotSupply

// StartOptions say where a server comes from.
type StartOptions struct {
	// Provider is "local" (a private throwaway server from binaries on
	// this machine; the default), "docker" or "compose" (containers with
	// the socket directory bind-mounted).
	Provider string
	// Image, for the container providers, replaces the target's image.
	Image string
}

// Server is a running server with a TCP endpoint on 127.0.0.1 and a Unix
// socket endpoint. Close stops it.
type Server struct {
	// Target is the kind of server: mysql, postgres, redis, memcached,
	// mongo or pgbouncer.
	Target string
	// TCP and Unix are its two endpoints.
	TCP, Unix Endpoint
	// Origin says where it came from, e.g. "local process
	// /usr/sbin/mariadbd (pid 1234)".
	Origin string

	srv      *compose.Server
	provider compose.Provider
	once     sync.Once
	err      error
}

// Start starts a server of target (mysql, postgres, redis, memcached, mongo
// or pgbouncer) with both endpoints, ready for connections. Close it when
// done; it is also stopped if this process dies.
func Start(ctx context.Context, target string, opt StartOptions) (*Server, error) {
	t, ok := targets.Lookup(target)
	if !ok || t.Own {
		return nil, fmt.Errorf("dbsock.Start(%q): not a database target; use one of mysql, postgres, redis, memcached, mongo, pgbouncer", target)
	}
	// Servers are pinned as dbsock run pins them (placement auto), so that
	// Compare and dbsocktest.Benchmark measure what it measures.
	place, err := placement.Resolve("auto", "", "")
	if err != nil {
		return nil, fmt.Errorf("dbsock.Start(%q): %w", target, err)
	}
	var p compose.Provider
	switch opt.Provider {
	case "", "local":
		l := compose.NewLocal()
		l.ServerCPUs = place.Server
		p = l
	case "docker":
		d := compose.NewDocker()
		d.ServerCPUs = place.Server
		if opt.Image != "" {
			d.Images = map[string]string{target: opt.Image}
		}
		p = d
	case "compose":
		c := compose.NewCompose(targets.Containers())
		c.ServerCPUs = place.Server
		if opt.Image != "" {
			c.Images = map[string]string{target: opt.Image}
		}
		p = c
	default:
		return nil, fmt.Errorf("dbsock.Start(%q): provider %q is not local, docker or compose", target, opt.Provider)
	}
	srv, err := p.Supply(ctx, t.Supply())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("dbsock.Start(%q): %w", target, err), p.Close())
	}
	return &Server{Target: target, TCP: srv.TCP, Unix: srv.Unix, Origin: srv.Origin, srv: srv, provider: p}, nil
}

// External is a server you already run (a CI service, your own database),
// reached over tcp (host:port on loopback) and unix (its socket); nothing
// is started, and Close stops nothing. Both endpoints must reach the same
// server: Compare checks that they do where the server can say.
func External(target string, tcp, unix Endpoint) (*Server, error) {
	t, ok := targets.Lookup(target)
	if !ok || t.Own {
		return nil, fmt.Errorf("dbsock.External(%q): not a database target; use one of mysql, postgres, redis, memcached, mongo, pgbouncer", target)
	}
	tcp.Transport, unix.Transport = TCP, Unix
	for _, ep := range []Endpoint{tcp, unix} {
		if err := ep.Validate(); err != nil {
			return nil, fmt.Errorf("dbsock.External(%q): %w", target, err)
		}
	}
	p := &compose.External{Endpoints: map[string]compose.Pair{target: {TCP: tcp, Unix: unix}}}
	srv, err := p.Supply(context.Background(), t.Supply())
	if err != nil {
		return nil, fmt.Errorf("dbsock.External(%q): %w", target, err)
	}
	return &Server{Target: target, TCP: srv.TCP, Unix: srv.Unix, Origin: srv.Origin, srv: srv, provider: p}, nil
}

// Endpoint is the server's endpoint on transport t.
func (s *Server) Endpoint(t Transport) Endpoint { return s.srv.Endpoints().On(t) }

// Close stops the server and removes what was made for it; it may be
// called more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.err = errors.Join(s.srv.Stop(context.Background()), s.provider.Close())
	})
	return s.err
}

// openings are the calls of Openers under way in Compare, by
// Endpoint.Opening: what Dial dials for each, so that Compare can check
// that an op dialed its own endpoint and can close its sockets when the
// server stops answering.
var (
	openings    sync.Map // uint64 -> *opening
	lastOpening atomic.Uint64
)

// opening is one call of an Opener: the connections Dial made for it.
type opening struct {
	mu     sync.Mutex
	dialed int
	conns  []net.Conn
}

// newOpening registers a new opening and tags ep with it.
func newOpening(ep Endpoint) (Endpoint, *opening) {
	ep.Opening = lastOpening.Add(1)
	o := &opening{}
	openings.Store(ep.Opening, o)
	return ep, o
}

func (o *opening) add(c net.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dialed++
	o.conns = append(o.conns, c)
}

func (o *opening) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dialed
}

// abort closes every connection dialed for the opening.
func (o *opening) abort() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.conns {
		c.Close()
	}
}

// Dial returns a dial function that reaches ep whatever network and address
// a client library passes it. Compare checks that your op connected
// through the Dial of the endpoint your Opener was given, and closes those
// connections when the server stops answering. MySQLConfig,
// PostgresConfig, RedisOptions and MongoOptions set it already; use it
// with a client of your own choosing.
func Dial(ep Endpoint) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, ep.Transport.Network(), ep.Address)
		if err == nil && ep.Opening != 0 {
			if o, ok := openings.Load(ep.Opening); ok {
				o.(*opening).add(c)
			}
		}
		return c, err
	}
}

// MySQLConfig is a go-sql-driver/mysql configuration for ep (use it with
// mysql.NewConnector and sql.OpenDB); it dials through Dial.
func MySQLConfig(ep Endpoint) *gomysql.Config {
	cfg := mysql.Config(ep)
	cfg.DialFunc = Dial(ep)
	return cfg
}

// PostgresConfig is a pgx connection configuration for ep (TLS off, as on
// both of dbsock's transports); it dials through Dial.
func PostgresConfig(ep Endpoint) (*pgx.ConnConfig, error) {
	cfg, err := postgres.Config(ep)
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = Dial(ep)
	return cfg, nil
}

// RedisOptions are go-redis options for ep (a pool of one); they dial
// through Dial.
func RedisOptions(ep Endpoint) *goredis.Options {
	o := redis.Options(ep)
	o.Dialer = Dial(ep)
	return o
}

// MongoOptions are MongoDB Go driver options for ep (a direct connection,
// a pool of one); they dial through Dial.
func MongoOptions(ep Endpoint) (*options.ClientOptions, error) {
	o, err := mongo.ClientOptions(ep)
	if err != nil {
		return nil, err
	}
	return o.SetDialer(dialFunc(Dial(ep))), nil
}

// dialFunc is a dial function as the MongoDB driver's ContextDialer.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// MemcachedServer is the server string gomemcache takes for ep (a socket
// path, or host:port).
func MemcachedServer(ep Endpoint) string { return ep.Address }
