// Package supply is where the servers dbsock measures come from. A Provider
// supplies a running Server for a target, with one endpoint on 127.0.0.1 TCP
// and one on a Unix socket; dbsock measures it and then stops it.
//
// Providers: Local starts private throwaway servers from binaries on PATH;
// Docker starts containers with testcontainers-go; External points at
// servers the user already runs; package compose's Compose starts the
// services of compose.yaml with Docker Compose. Auto tries providers in
// order and takes the first that can supply the target. Nothing here names
// a target: how each kind of server is started (its Recipe: a local recipe
// built on LocalServer, and a container spec) lives in the target's own
// package under targets/; package child runs dbsock's own servers as child
// processes.
//
// It is part of dbsock's own machinery, and its API may change between
// versions: programs that measure their own code use package dbsock.
package supply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/setting"
)

// ErrCannotSupply is wrapped by a provider that has no way to supply a target
// (e.g. no server binary installed, no endpoint given). Auto then tries the
// next provider.
var ErrCannotSupply = errors.New("cannot supply")

// Server is a running server with its endpoints.
type Server struct {
	Target string
	// Provenance says where the server came from (provider, origin,
	// image, network mode, socket dir) and warns of what makes its
	// numbers not comparable with a native server's.
	drivers.Provenance
	// ByPath are its endpoints keyed by path (tcp and unix always), each
	// present or absent with why: Path reads them, Set and SetAbsent
	// write them.
	ByPath drivers.Endpoints
	// SeedAlso are endpoints that reach other instances of the server
	// (the container behind the published and bridge paths): seeded too.
	SeedAlso []drivers.Endpoint
	// PID is the server's process ID when dbsock started it as a local
	// process, else 0.
	PID int
	// CPU reads the server's CPU time and context switches (its process
	// tree, or its container's); nil when the server's processes cannot be
	// seen, and CPUWhyNot says why.
	CPU       cpustat.Meter
	CPUWhyNot string
	// HopCPU, for a hop in front of another server (Join), reads the
	// hop's own processes alone, whose CPU CPU counts too; nil otherwise.
	HopCPU cpustat.Meter
	// CPUs is the container's cpuset as the engine reports it ("" when
	// not pinned); local servers are read back through PID instead.
	CPUs string
	// SeedEach says that the two endpoints reach different data (two
	// instances of one server): the data is seeded over both.
	SeedEach bool
	stop     func(context.Context) error
	restart  func(context.Context) error
}

// Path is the server's endpoint on path t, or an error saying why it has
// none: its entry's reason, else the table's (PathInfo.Absent).
func (s *Server) Path(t drivers.Transport) (drivers.Endpoint, error) {
	if r := t.Route(); r != t { // a control: its route's endpoint, under its own name
		ep, err := s.Path(r)
		ep.Transport = t
		return ep, err
	}
	e, ok := s.ByPath[t]
	switch {
	case ok && e.Absent != nil:
		return drivers.Endpoint{}, e.Absent
	case ok:
		return e.Endpoint, nil
	case drivers.IsPath(t):
		return drivers.Endpoint{}, errors.New(t.Info().Absent)
	}
	return drivers.Endpoint{}, fmt.Errorf("%s: unknown path %q (want %s)", s.Target, t, drivers.PathNames())
}

// Set gives the server eps, each on its path (Endpoint.Transport). The
// entries are copied first: a copy of the server keeps its own.
func (s *Server) Set(eps ...drivers.Endpoint) {
	s.ByPath = maps.Clone(s.ByPath)
	if s.ByPath == nil {
		s.ByPath = drivers.Endpoints{}
	}
	for _, ep := range eps {
		s.ByPath[ep.Transport] = drivers.PathEndpoint{Endpoint: ep}
	}
}

// SetAbsent says why the server has no endpoint on paths.
func (s *Server) SetAbsent(why error, paths ...drivers.Transport) {
	s.ByPath = maps.Clone(s.ByPath)
	if s.ByPath == nil {
		s.ByPath = drivers.Endpoints{}
	}
	for _, t := range paths {
		s.ByPath[t] = drivers.PathEndpoint{Absent: why}
	}
}

// Absent is why the server has no endpoint on t, when its provider said
// (nil otherwise).
func (s *Server) Absent(t drivers.Transport) error { return s.ByPath[t].Absent }

// TCP is the server's endpoint on 127.0.0.1 TCP: the tcp path's, or, on
// a hop that serves no tcp path (one that reaches its server over TCP
// only), its path whose client's leg is 127.0.0.1 TCP (tcp-tcp).
func (s *Server) TCP() drivers.Endpoint { return s.clientLeg(drivers.TCP) }

// Unix is the server's endpoint on its Unix socket: the unix path's, or,
// on a hop that serves no unix path, its path whose client's leg is its
// socket (unix-tcp).
func (s *Server) Unix() drivers.Endpoint { return s.clientLeg(drivers.Unix) }

// clientLeg is the server's endpoint on path t, else on the first path
// through a hop whose client's leg is t.
func (s *Server) clientLeg(t drivers.Transport) drivers.Endpoint {
	if e, ok := s.ByPath[t]; ok && e.Absent == nil {
		return e.Endpoint
	}
	for _, p := range drivers.PathTable {
		if e, ok := s.ByPath[p.Path]; ok && e.Absent == nil && p.Hop != "" && p.Seen == t {
			return e.Endpoint
		}
	}
	return drivers.Endpoint{}
}

// Served are a server's endpoints on 127.0.0.1 TCP at tcpAddr and on its
// Unix socket at sock, with account's user, password and database.
func Served(account drivers.Endpoint, tcpAddr, sock string) (tcp, unix drivers.Endpoint) {
	tcp, unix = account, account
	tcp.Transport, tcp.Address = drivers.TCP, tcpAddr
	unix.Transport, unix.Address = drivers.Unix, sock
	return tcp, unix
}

// Current is paths as the server serves them now: a restarted container
// may have another address or network namespace (the bridge, service and
// pod paths), so each server instance is measured on its own.
func (s *Server) Current(paths drivers.Paths) drivers.Paths {
	now := make(drivers.Paths, len(paths))
	for i, ep := range paths {
		now[i] = ep
		if cur, err := s.Path(ep.Transport); err == nil {
			now[i] = cur
		}
	}
	return now
}

// ErrNoRestart is returned by Restart for a server dbsock cannot restart
// (one it did not start).
var ErrNoRestart = errors.New("cannot restart")

// Restart stops the server and starts it again on the same endpoints and
// data (a new server instance; nothing is re-created), and returns once it
// accepts connections again: a server instance is what --instances
// repeats. Connections to the old instance are gone.
func (s *Server) Restart(ctx context.Context) error {
	if s.restart == nil {
		return setting.Err("%w %s: dbsock did not start this server (provider %s), so it cannot start it again; use %s 1", ErrNoRestart, s.Target, s.Provider, setting.Instances)
	}
	return s.restart(ctx)
}

// CanRestart says whether Restart can restart the server.
func (s *Server) CanRestart() bool { return s.restart != nil }

// Endpoints returns the server's two endpoints.
func (s *Server) Endpoints() drivers.Pair { return drivers.Pair{TCP: s.TCP(), Unix: s.Unix()} }

// Stop stops the server if the provider started it and removes what it
// created. It is safe to call more than once.
func (s *Server) Stop(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	stop := s.stop
	s.stop = nil
	return stop(ctx)
}

// Lent is a provider that supplies one server already running, for one
// target, and leaves stopping it to its owner: a measurement of a server a
// library user started keeps its provenance (local, docker) and its CPU
// meter.
type Lent struct {
	Target string
	Server *Server
	// Restart lets the run restart the lent server between instances,
	// when its owner's provider can (its data kept; its owner still stops
	// it).
	Restart bool
}

// Name implements Provider: the lent server's own provider.
func (l *Lent) Name() string { return l.Server.Provider }

// Supply implements Provider.
func (l *Lent) Supply(_ context.Context, t Target) (*Server, error) {
	if t.Name != l.Target {
		return nil, fmt.Errorf("%w %s: only %s's server was lent", ErrCannotSupply, t.Name, l.Target)
	}
	s := *l.Server
	s.Target, s.stop, s.restart = t.Name, nil, nil // its owner stops it
	if orig := l.Server; l.Restart && orig.restart != nil {
		s.restart = func(ctx context.Context) error {
			err := orig.Restart(ctx)
			// What the restart changed (pid, meter, a container's
			// addresses), under the lent name and without the owner's stop.
			restart := s.restart
			s = *orig
			s.Target, s.stop, s.restart = t.Name, nil, restart
			return err
		}
	}
	return &s, nil
}

// Close implements Provider: the server is its owner's to stop.
func (*Lent) Close() error { return nil }

// Provider supplies servers.
type Provider interface {
	// Name is the provider's name as given to --provider.
	Name() string
	// Supply returns a running server for target, or an error wrapping
	// ErrCannotSupply when this provider has no way to.
	Supply(ctx context.Context, t Target) (*Server, error)
	// Close removes whatever the provider created that its servers' Stop
	// has not.
	Close() error
}

// Auto tries its providers in order.
type Auto struct {
	Providers []Provider
}

// Name implements Provider.
func (*Auto) Name() string { return "auto" }

// Supply implements Provider: the first provider that can supply target wins.
func (a *Auto) Supply(ctx context.Context, t Target) (*Server, error) {
	reasons := []any{ErrCannotSupply, t.Name}
	for _, p := range a.Providers {
		s, err := p.Supply(ctx, t)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, ErrCannotSupply) {
			return nil, err
		}
		reasons = append(reasons, err) // kept as an error: it may name a setting
	}
	return nil, setting.Err("%w %s: "+strings.TrimSuffix(strings.Repeat("%v; ", len(reasons)-2), "; "), reasons...)
}

// Close implements Provider.
func (a *Auto) Close() error {
	var errs []error
	for _, p := range a.Providers {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Join makes one Server of s and the servers it stands for together (the
// database behind a pooler; the other instance of a server that serves one
// transport per process): Stop stops s, then each of them, and CPU reads
// all of them. s keeps its own endpoints; a caller takes others' as it
// needs.
func (s *Server) Join(others ...*Server) *Server {
	stops := []func(context.Context) error{s.stop}
	restarts := []func(context.Context) error{}
	meters := cpustat.Sum{}
	var whyNot []string
	for _, srv := range append([]*Server{s}, others...) {
		if srv != s {
			stops = append(stops, srv.stop)
		}
		restarts = append(restarts, srv.restart)
		if srv.CPU != nil {
			meters = append(meters, srv.CPU)
		} else if srv.CPUWhyNot != "" {
			whyNot = append(whyNot, srv.CPUWhyNot)
		}
	}
	s.stop = func(ctx context.Context) error {
		var errs []error
		for _, stop := range stops {
			if stop != nil {
				errs = append(errs, stop(ctx))
			}
		}
		return errors.Join(errs...)
	}
	// Restarted the other way round: what s stands in front of first.
	s.restart = func(ctx context.Context) error {
		for i := len(restarts) - 1; i >= 0; i-- {
			if err := restarts[i](ctx); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range restarts {
		if r == nil {
			s.restart = nil
		}
	}
	if len(whyNot) > 0 {
		s.CPU, s.CPUWhyNot = nil, strings.Join(whyNot, "; ")
	} else if len(meters) > 1 {
		s.CPU = meters
	}
	return s
}

// SetStop sets what srv.Stop does: for providers outside this package
// (test fakes among them).
func SetStop(srv *Server, stop func(context.Context) error) { srv.stop = stop }

// SetRestart sets what srv.Restart does, likewise.
func SetRestart(srv *Server, restart func(context.Context) error) { srv.restart = restart }
