// Package grpc registers the grpc target: a gRPC health Check on a kept
// HTTP/2 connection to dbsock's own server in a child process.
package grpc

import (
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets"
)

const name = "grpc"

func init() {
	child.Register(name, newServer)
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: supply.ChildRecipe(name)},
		Order:  60, Own: true,
		Short:    "gRPC health Check on a kept HTTP/2 connection (dbsock's server)",
		ServedBy: "dbsock's gRPC health server (grpc-go) in a child process",
		Library:  "google.golang.org/grpc",
		Settings: targets.Own(func(int) drivers.Driver { return New() }),
	})
}
