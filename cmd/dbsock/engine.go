package main

import (
	"context"
	"time"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/supply"
)

// checkEngine refuses, before anything starts, a provider or a client
// place that the Docker engine here cannot serve (Docker Desktop; compose
// and the client container without host networking, as under rootless
// Docker): exit 2 and one line, instead of a failure once servers run.
func (o *runOptions) checkEngine() error {
	container, needs := o.client.place == "container", o.engineNeeds()
	if needs.Provider == "" && !container {
		return nil
	}
	eng := supply.ProbeEngine(context.Background(), 3*time.Second)
	if err := eng.CannotRun(needs, container); err != nil {
		return usagef("%s", inWords(err))
	}
	return nil
}

// engineNeeds is what --provider needs of the Docker engine: nothing (the
// zero value) but for the providers that run containers.
func (o *runOptions) engineNeeds() supply.EngineNeeds {
	switch o.servers.provider {
	case "docker":
		return supply.DockerNeeds()
	case "compose":
		return compose.EngineNeeds()
	}
	return supply.EngineNeeds{}
}
