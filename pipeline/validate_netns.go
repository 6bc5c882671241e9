package pipeline

import (
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// validateNetns refuses the service and pod paths for a client on the host
// that may not enter other containers' network namespaces (a user in the
// docker group, not root): they would fail only once the servers are up.
// (The client container does not measure them: validateRemote.)
func (p Plan) validateNetns() error {
	if p.Client.Remote != nil {
		return nil
	}
	for _, t := range p.paths() {
		if !t.Info().Netns {
			continue
		}
		if ok, why := drivers.CanEnterNetns(); !ok {
			return setting.Err("%s %s: the %s path is dialed from inside another container's network namespace, and %s: run as root", setting.Paths, joinPaths(p.paths()), t, why)
		}
	}
	return nil
}
