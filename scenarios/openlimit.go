package scenarios

import (
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// openLimit is how long opening a connection of d may take: the op
// timeout, or longer for a driver whose connections another process
// opens within the op timeout (an agent, whose own silence is told apart
// from the server's only when dbsock waits longer than it).
func openLimit(d drivers.Driver, timeout time.Duration) time.Duration {
	if l, ok := d.(interface {
		OpenLimit(time.Duration) time.Duration
	}); ok {
		return l.OpenLimit(timeout)
	}
	return timeout
}
