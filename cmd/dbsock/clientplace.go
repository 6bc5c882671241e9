package main

import (
	"context"
	"os"

	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/supply"
)

// Places for --client: host (this host: Go's client in a process of its
// own for each server instance, dbsock's agent), inprocess (Go's client
// in dbsock's own process, one process for the whole run), container.
var clientPlaces = []string{"host", "inprocess", "container"}

// goAgent is the dbsock executable whose agent runs Go's client in a
// process of its own for each server instance (--client host), or ""
// for Go's client in this process (--client inprocess, or an executable
// dbsock cannot name).
func (o *runOptions) goAgent() string {
	if o.client.place != "host" {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

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

// clientPlace names where the timing loop ran, for the report: host (in
// dbsock's process, or in dbsock's agent on this host) or container.
func (o *runOptions) clientPlace() string {
	if o.client.place == "inprocess" {
		return "host"
	}
	return o.client.place
}
