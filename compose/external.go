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
type Pair = drivers.Pair

// Name implements Provider.
func (*External) Name() string { return "external" }

// Supply implements Provider.
func (e *External) Supply(_ context.Context, t Target) (*Server, error) {
	target := t.Name
	p, ok := e.Endpoints[target]
	addr, sock := "--"+target+"-addr", t.Flag()
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
