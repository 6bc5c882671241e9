package compose

import (
	"context"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
)

// External supplies servers the user already runs, from endpoints given on
// the command line. It starts and stops nothing.
type External struct {
	// Endpoints maps a target to its TCP and Unix endpoints. A target needs
	// both to be measured.
	Endpoints map[string]Pair
}

// Pair is the two endpoints of one server; either may be empty when not given.
type Pair struct {
	TCP  drivers.Endpoint
	Unix drivers.Endpoint
}

// Given reports whether any endpoint address was given.
func (p Pair) Given() bool { return p.TCP.Address != "" || p.Unix.Address != "" }

// Name implements Provider.
func (*External) Name() string { return "external" }

// Supply implements Provider.
func (e *External) Supply(_ context.Context, target string) (*Server, error) {
	p, ok := e.Endpoints[target]
	addr, sock := "--"+target+"-addr", SocketFlag(target)
	if !ok || !p.Given() {
		return nil, fmt.Errorf("%w %s: external provider: no %s or %s given", ErrCannotSupply, target, addr, sock)
	}
	if p.TCP.Address == "" || p.Unix.Address == "" {
		missing := addr
		if p.Unix.Address == "" {
			missing = sock
		}
		return nil, fmt.Errorf("external %s server: both transports are compared, so both %s and %s are needed; add %s", target, addr, sock, missing)
	}
	return &Server{Target: target, Provider: e.Name(), TCP: p.TCP, Unix: p.Unix, Origin: "external (already running)"}, nil
}

// Close implements Provider.
func (*External) Close() error { return nil }

// SocketFlag is the flag that gives target's socket: --TARGET-socket, or
// --postgres-socket-dir (PostgreSQL is given a directory, as libpq is).
func SocketFlag(target string) string {
	if target == "postgres" {
		return "--postgres-socket-dir"
	}
	return "--" + target + "-socket"
}
