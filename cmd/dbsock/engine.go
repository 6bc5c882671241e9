package main

import (
	"context"
	"time"

	"github.com/dbsock/dbsock/supply"
)

// checkEngine refuses, before anything starts, a provider or a client
// place that the Docker engine here cannot serve (Docker Desktop; compose
// and the client container without host networking, as under rootless
// Docker): exit 2 and one line, instead of a failure once servers run.
func (o *runOptions) checkEngine() error {
	container := o.client == "container"
	if o.provider != "docker" && o.provider != "compose" && !container {
		return nil
	}
	eng := supply.ProbeEngine(context.Background(), 3*time.Second)
	if err := eng.CannotRun(o.provider, container); err != nil {
		return usagef("%s", inWords(err))
	}
	return nil
}
