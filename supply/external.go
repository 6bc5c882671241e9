package supply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
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
	// Hops maps the command name of a hop a target of dbsock's is (a
	// pooler, as /proc/PID/comm names it) to its product's name: found
	// at an endpoint of another target, it is refused as any proxy is
	// (checkListeners).
	Hops map[string]string
}

// Pair is the two endpoints of one server; either may be empty when not given.
type Pair = drivers.Pair

// Name implements Provider.
func (*External) Name() string { return "external" }

// Supply implements Provider.
func (e *External) Supply(ctx context.Context, t Target) (*Server, error) {
	target := t.Name
	p, ok := e.Endpoints[target]
	if !ok || !p.Given() {
		return nil, setting.Err("%w %s: external provider: %w", ErrCannotSupply, target, &MissingEndpoint{Target: target, Paths: []drivers.Transport{drivers.TCP, drivers.Unix}})
	}
	if p.TCP.Address == "" || p.Unix.Address == "" {
		missing := drivers.TCP
		if p.Unix.Address == "" {
			missing = drivers.Unix
		}
		return nil, setting.Err("external %s server: both transports are compared, so both endpoints are needed: %w", target, &MissingEndpoint{Target: target, Paths: []drivers.Transport{missing}})
	}
	warning, err := checkListeners(target, p.TCP, p.Unix, e.Hops)
	if err != nil {
		return nil, err
	}
	srv := &Server{Target: target, Provenance: drivers.Provenance{Provider: e.Name(), Origin: "external (already running)"}}
	if warning != "" {
		srv.Warnings = append(srv.Warnings, warning)
	}
	srv.Set(p.TCP, p.Unix)
	if host, _, _ := net.SplitHostPort(p.TCP.Address); host == "127.0.0.1" {
		OfferLoopbacks(ctx, srv, true, "") // its tcp6 path, where it listens on ::1 at the same port
	} else {
		for _, a := range Aliases("127.0.0.1") {
			srv.SetAbsent(errors.New("its TCP address ("+p.TCP.Address+") is not on 127.0.0.1, so dbsock does not take "+AliasOf(p.TCP, a).Address+" for the same listener"), a.Path)
		}
	}
	if p.TLS.Address == "" {
		srv.SetAbsent(setting.Err("no %s (or %s) was given", setting.Of(target, "TLSCA"), setting.Of(target, "TLSInsecure")), TLSPath())
	} else if srv.Set(p.TLS); p.TLS.TLS.InsecureSkipVerify && p.TLS.TLS.VerifyConnection == nil {
		srv.Warnings = append(srv.Warnings, "The tls path did not verify the server's certificate, as asked: the connection was encrypted, but not proven to reach this server.")
	}
	pid := e.ServerPIDs[target]
	if pid > 0 {
		if err := Owns(pid, p.TCP.Address); err != nil {
			return nil, setting.Err("%s %s=%d: %w; give the pid of the server listening there", setting.ServerPID, target, pid, err)
		}
		srv.CPU = cpustat.NewTree(pid, "process tree of the pid given for the server")
	} else if found, err := listeningPID(p.TCP.Address); err == nil {
		pid = found
		srv.CPU = cpustat.NewTree(pid, "process tree of the TCP listener (found in /proc)")
	} else {
		srv.CPUWhyNot = err.Error()
	}
	if pid > 0 {
		if cpus, err := placement.Affinity(pid); err == nil {
			srv.CPUs = placement.FormatList(cpus) + " (the server's own affinity: dbsock pins only the servers it starts)"
		}
	}
	return srv, nil
}

// Owns checks that pid's process tree holds the socket listening on
// addr's port: a pid given for a server must be that server's.
func Owns(pid int, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	ok, err := cpustat.OwnsPort(pid, n)
	switch {
	case err != nil:
		return fmt.Errorf("cannot tell whether it listens on %s: %w", addr, err)
	case !ok:
		who := ""
		if other, err := cpustat.ListeningPID(n); err == nil {
			who = fmt.Sprintf(" (process %d does)", other)
		}
		return fmt.Errorf("neither it nor a process below it listens on %s%s", addr, who)
	}
	return nil
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
