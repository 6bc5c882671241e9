// Package echo registers the echo target: a ping-pong with dbsock's own
// echo server in a child process, the transport floor through Go's runtime.
package echo

import (
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets"
)

const name = "echo"

func init() {
	child.Register(name, newServer)
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: supply.ChildRecipe(name)},
		Order:  50, Own: true, Layer: drivers.LayerRuntime,
		Short:    "4-byte ping-pong with dbsock's own echo server: the transport through Go's runtime",
		ServedBy: "dbsock's echo server in a child process (Go netpoller on both sides)",
		Settings: targets.Own(func(size int) drivers.Driver { return New(size) }),
	})
}
