package supply

import (
	"fmt"

	"github.com/dbsock/dbsock/drivers"
)

// PathServer is a Provider that can say, before it supplies anything,
// which paths it serves for none of a run's targets: a run that asks for
// such a path is refused before anything starts, instead of measured
// without it.
type PathServer interface {
	// CannotServe says why the provider serves path t for none of
	// targets, or "" when it may serve it for some.
	CannotServe(t drivers.Transport, targets []string) string
}

// noRoutes is why a provider serves no published, bridge, service or pod
// path.
const noRoutes = "only the docker and compose providers serve it (a second container of the server on a bridge network)"

// routed says whether t is a path through Docker's networks.
func routed(t drivers.Transport) bool {
	switch t {
	case drivers.Published, drivers.Bridge, drivers.Service, drivers.Pod:
		return true
	}
	return false
}

// CannotServe implements PathServer: local servers have no routes through
// Docker's networks.
func (*Local) CannotServe(t drivers.Transport, _ []string) string {
	if routed(t) {
		return noRoutes
	}
	return ""
}

// CannotServe implements PathServer: a server the user runs has no routes
// through Docker's networks, and a tls path only where its flags give one.
func (e *External) CannotServe(t drivers.Transport, targets []string) string {
	switch {
	case routed(t):
		return noRoutes
	case t != drivers.TLS:
		return ""
	}
	name := "TARGET"
	for _, n := range targets {
		if e.Endpoints[n].TLS.Address != "" {
			return ""
		}
		name = n
	}
	return fmt.Sprintf("no tls endpoint was given: add --%s-tls-ca FILE (or --%s-tls-insecure), and --%s-tls-addr where TLS listens on another port", name, name, name)
}
