package supply

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// PathServer is a Provider that can say, before it supplies anything,
// which paths it serves for none of a run's targets: a run that asks for
// such a path is refused before anything starts, instead of measured
// without it.
type PathServer interface {
	// CannotServe says why the provider serves path t for none of
	// targets, or nil when it may serve it for some.
	CannotServe(t drivers.Transport, targets []string) error
}

// MissingEndpoint is what a server the user runs (External) was not
// given: its endpoints on Paths, for Target. Its Error names External's
// field; whoever faces a person words it in that person's terms (dbsock
// run: its --TARGET-* flags; package dbsock: External's arguments).
type MissingEndpoint struct {
	Target string
	Paths  []drivers.Transport
}

func (m *MissingEndpoint) Error() string {
	var paths, fields []string
	for _, p := range m.Paths {
		paths = append(paths, string(p))
		fields = append(fields, strings.ToUpper(string(p))) // Pair's field
	}
	return fmt.Sprintf("no %s endpoint was given for %s: set %s of External.Endpoints[%q]", strings.Join(paths, " or "), m.Target, strings.Join(fields, " and "), m.Target)
}

// CannotServe implements PathServer: local servers have no routes through
// Docker's networks.
func (*Local) CannotServe(t drivers.Transport, _ []string) error {
	if p := t.Info(); p.Docker {
		return errors.New(p.Absent)
	}
	return nil
}

// CannotServe implements PathServer: a server the user runs has no routes
// through Docker's networks, and a tls path only where it was given one
// (a MissingEndpoint otherwise).
func (e *External) CannotServe(t drivers.Transport, targets []string) error {
	switch p := t.Info(); {
	case p.Docker:
		return errors.New(p.Absent)
	case !p.TLS:
		return nil
	}
	var missing error
	for _, n := range targets {
		if e.Endpoints[n].TLS.Address != "" {
			return nil
		}
		missing = &MissingEndpoint{Target: n, Paths: []drivers.Transport{t}}
	}
	return missing
}
