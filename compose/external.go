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
	if !ok || !p.Given() {
		return nil, fmt.Errorf("%w %s: external provider: no --%s-addr or --%s-socket given", ErrCannotSupply, target, target, target)
	}
	if p.TCP.Address == "" || p.Unix.Address == "" {
		missing := "--" + target + "-addr"
		if p.Unix.Address == "" {
			missing = "--" + target + "-socket"
		}
		return nil, fmt.Errorf("external %s server: both transports are compared, so both --%s-addr and --%s-socket are needed; add %s", target, target, target, missing)
	}
	return &Server{Target: target, Provider: e.Name(), TCP: p.TCP, Unix: p.Unix, Origin: "external (already running)"}, nil
}

// Close implements Provider.
func (*External) Close() error { return nil }
