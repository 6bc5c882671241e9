package main

import (
	"context"

	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/supply"
)

// Places for --client.
var clientPlaces = []string{"host", "container"}

// remoteClient is the plan's Client for --client container: one client
// container per target, pinned where the client would be, in which
// dbsock's own agent runs (dbsock agent).
func (o *runOptions) remoteClient(cpus []int) pipeline.StartRemote {
	if o.client.place != "container" {
		return nil
	}
	return func(ctx context.Context, target string, dirs []string) (pipeline.Remote, error) {
		return supply.StartClient(ctx, supply.ClientOptions{Binary: o.client.binary, Dirs: dirs, CPUs: cpus, Target: target})
	}
}
