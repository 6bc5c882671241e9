package compose

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
)

// External supplies servers the user already runs, from endpoints given on
// the command line. It starts and stops nothing.
type External struct {
	// Endpoints maps a target to its TCP and Unix endpoints. A target needs
	// both to be measured.
	Endpoints map[string]Pair
	// ServerPIDs maps a target to the pid whose process tree is the server
	// (--server-pid); without one, dbsock looks for the TCP listener.
	ServerPIDs map[string]int
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
	srv := &Server{Target: target, Provenance: drivers.Provenance{Provider: e.Name(), Origin: "external (already running)"}, TCP: p.TCP, Unix: p.Unix}
	if pid := e.ServerPIDs[target]; pid > 0 {
		srv.CPU = cpustat.NewTree(pid, "process tree given by --server-pid")
	} else if pid, err := listeningPID(p.TCP.Address); err == nil {
		srv.CPU = cpustat.NewTree(pid, "process tree of the TCP listener (found in /proc)")
	} else {
		srv.CPUWhyNot = err.Error()
	}
	return srv, nil
}

// listeningPID is the pid listening on addr's port.
func listeningPID(addr string) (int, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, err
	}
	return cpustat.ListeningPID(n)
}

// Close implements Provider.
func (*External) Close() error { return nil }
