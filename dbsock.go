// Package dbsock measures how your own database code performs over a Unix
// domain socket versus TCP on 127.0.0.1, with the servers, the timing loop
// and the paired statistics of the dbsock command.
//
// Start a server with both endpoints (or take a server you run with
// External), point your client at either one with the package of your
// client library under clients/ (dbsockpg.Config, dbsockmysql.Config,
// dbsockredis.Options, dbsockmongo.Options, dbsockmemcache.Client), or with
// Dial in a client of your own, and Compare runs your operation over both
// transports in interleaved block pairs and returns the same Report that
// "dbsock run --format json" writes:
//
//	srv, err := dbsock.Start(ctx, "postgres", dbsock.StartOptions{})
//	if err != nil { ... }
//	defer srv.Close()
//	rep, err := dbsock.Compare(ctx, srv, "my-query", open, dbsock.CompareOptions{})
//	c := rep.Summary[0].Against(dbsock.Unix) // c.SpeedupP50, c.SpeedupP50CI, c.Verdict
//	err = dbsock.AtLeast(rep, 1.05) // a gate: the interval's low end at least 1.05
//
// Importing a package of clients/ makes its targets known to Start and
// External and compiles only that client library.
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
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/dbsock/dbsock/clients"
	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/internal/userop"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
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

// Warning is why a case's or a server's numbers may not be solid
// (Summary.Warnings, a target's Warnings): its Kind, and its words, in
// which Compare names the settings it advises on as CompareOptions'
// fields.
type Warning = results.Warning

// ErrUnavailable is wrapped by Start's error when no server of the target
// can be had here (no server binaries installed, no Docker engine, no
// image): a test may skip then.
var ErrUnavailable = supply.ErrCannotSupply

// StartOptions say where a server comes from.
type StartOptions struct {
	// Provider is "local" (a private throwaway server from binaries on
	// this machine; the default, which a test wants: no engine, no image),
	// "docker" or "compose" (containers with the socket directory
	// bind-mounted), or "auto", as dbsock run's default: a container where
	// an engine answers and the image is here, else a local process.
	Provider string
	// Image, for the container providers, replaces the target's image.
	Image string
	// Settings are the target's own settings, as dbsock run's
	// --TARGET-* flags set them (nil: the defaults): the Settings of the
	// target's package under targets/, from its DefaultSettings, e.g.
	// redis.DefaultSettings() with Protocol 2. Compare's server-side
	// client (which says what the server is and which path each of your
	// connections is on) talks to the server with them. Start refuses
	// settings that do not validate, naming their fields
	// (redis.Settings.Protocol).
	Settings targets.Settings
}

// Server is a running server with a TCP endpoint on 127.0.0.1 and a Unix
// socket endpoint. Close stops it.
type Server struct {
	// Target is the kind of server: one of the database targets that the
	// packages of clients/ make known.
	Target string
	// TCP and Unix are its two endpoints.
	TCP, Unix Endpoint
	// Origin says where it came from, e.g. "local process
	// /usr/sbin/SERVER (pid 1234)".
	Origin string

	srv      *supply.Server
	settings targets.Settings // nil: the target's defaults
	provider supply.Provider
	once     sync.Once
	err      error
}

// Start starts a server of target (a database target that a package of
// clients/ makes known, e.g. postgres) with both endpoints, ready for
// connections. Close it when done; it is also stopped if this process
// dies.
func Start(ctx context.Context, target string, opt StartOptions) (*Server, error) {
	t, err := lookup(target)
	if err != nil {
		return nil, fmt.Errorf("dbsock.Start(%q): %w", target, err)
	}
	if err := checkSettings(t, opt.Settings); err != nil {
		return nil, fmt.Errorf("dbsock.Start(%q): %w", target, err)
	}
	// Servers are pinned as dbsock run pins them (placement auto), so that
	// Compare and dbsocktest.Benchmark measure what it measures.
	place, err := placement.Resolve("auto", "", "")
	if err != nil {
		return nil, fmt.Errorf("dbsock.Start(%q): %w", target, err)
	}
	var p supply.Provider
	switch opt.Provider {
	case "", "local":
		l := supply.NewLocal()
		l.ServerCPUs = place.Server
		p = l
	case "docker":
		d := supply.NewDocker()
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
	case "auto":
		d, l := supply.NewDocker(), supply.NewLocal()
		d.ServerCPUs, l.ServerCPUs = place.Server, place.Server
		p = &supply.Auto{Providers: []supply.Provider{d, l}}
	default:
		return nil, fmt.Errorf("dbsock.Start(%q): provider %q is not local, docker, compose or auto", target, opt.Provider)
	}
	srv, err := p.Supply(ctx, t.Supply())
	if err != nil {
		return nil, setting.Reword(errors.Join(setting.Err("dbsock.Start(%q): %w", target, err), p.Close()), optionName)
	}
	return &Server{Target: target, TCP: srv.TCP(), Unix: srv.Unix(), Origin: srv.Origin, srv: srv, settings: opt.Settings, provider: p}, nil
}

// checkSettings checks that s, when set, are t's settings and valid.
func checkSettings(t *targets.Target, s targets.Settings) error {
	if s == nil {
		return nil
	}
	if got, want := reflect.TypeOf(s), reflect.TypeOf(t.Settings()); got != want {
		return fmt.Errorf("StartOptions.Settings are a %s; the %s target takes a %s (its package's DefaultSettings)", got, t.Name, want)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("StartOptions.Settings: %w", err)
	}
	return nil
}

// External is a server you already run (a CI service, your own database),
// reached over tcp (host:port on loopback) and unix (its socket); nothing
// is started, and Close stops nothing. Both endpoints must reach the same
// server: Compare checks that they do where the server can say.
func External(target string, tcp, unix Endpoint) (*Server, error) {
	t, err := lookup(target)
	if err != nil {
		return nil, fmt.Errorf("dbsock.External(%q): %w", target, err)
	}
	tcp.Transport, unix.Transport = TCP, Unix
	for _, ep := range []Endpoint{tcp, unix} {
		if ep.Address == "" {
			continue // the supply layer says which is missing
		}
		if err := ep.Validate(); err != nil {
			return nil, fmt.Errorf("dbsock.External(%q): %w", target, err)
		}
	}
	p := &supply.External{Endpoints: map[string]supply.Pair{target: {TCP: tcp, Unix: unix}}}
	srv, err := p.Supply(context.Background(), t.Supply())
	if err != nil {
		return nil, setting.Reword(setting.Err("dbsock.External(%q): %w", target, err), optionName, setting.As(externalArgs))
	}
	return &Server{Target: target, TCP: srv.TCP(), Unix: srv.Unix(), Origin: srv.Origin, srv: srv, provider: p}, nil
}

// externalArgs words a missing endpoint as External's arguments.
func externalArgs(m *supply.MissingEndpoint) string {
	var paths []string
	for _, p := range m.Paths {
		paths = append(paths, string(p))
	}
	return fmt.Sprintf("no %s endpoint was given: pass External's %s argument (an Endpoint whose Address is HOST:PORT on loopback for tcp, the socket's path for unix)",
		strings.Join(paths, " or "), strings.Join(paths, " and "))
}

// Endpoint is the server's endpoint on transport t.
func (s *Server) Endpoint(t Transport) Endpoint { return s.srv.Endpoints().On(t) }

// lookup finds a database target, or says which package of clients/
// makes it known.
func lookup(target string) (*targets.Target, error) {
	pkg, known := clients.Path(target)
	if !known {
		return nil, fmt.Errorf("not a database target; use one of %s", strings.Join(clients.Targets(), ", "))
	}
	t, ok := targets.Lookup(target)
	if !ok {
		return nil, fmt.Errorf("the %s target is not compiled in: import %s (its client's helpers)", target, pkg)
	}
	return t, nil
}

// CloseTimeout bounds Close: a server that has not stopped by then is
// left to "dbsock clean" (or to this process's end, for a local one).
const CloseTimeout = time.Minute

// serverCloseLimit is CloseTimeout (a test shortens it).
var serverCloseLimit = CloseTimeout

// Close stops the server and removes what was made for it, within
// CloseTimeout; it may be called more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), serverCloseLimit)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- errors.Join(s.srv.Stop(ctx), s.provider.Close()) }()
		select {
		case s.err = <-done:
		case <-ctx.Done():
			s.err = fmt.Errorf("dbsock: the %s server (%s) did not stop within %s; run dbsock clean to remove what is left", s.Target, s.Origin, serverCloseLimit)
		}
	})
	return s.err
}

// Dial returns a dial function that reaches ep whatever network and address
// a client library passes it. Compare checks that your op connected
// through the Dial of the endpoint your Opener was given, and closes those
// connections when the server stops answering. The packages of clients/
// set it already; use it with a client of your own choosing.
func Dial(ep Endpoint) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, ep.Transport.Network(), ep.Address)
		if err == nil {
			userop.Dialed(ep, c)
		}
		return c, err
	}
}
