// Package floor registers the floor target: the echo ping-pong with
// blocking system calls on both sides, in a child process: the kernel's
// own cost, without Go's netpoller.
package floor

import (
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets"
)

const name = "floor"

func init() {
	child.Register(name, newServer)
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: supply.ChildRecipe(name)},
		Order:  55, Own: true, Layer: drivers.LayerKernel,
		Short:    "4-byte ping-pong with blocking syscalls on both sides: the kernel floor",
		ServedBy: "dbsock's floor server in a child process (blocking read/write on a locked OS thread)",
		Settings: targets.Own(func(int) drivers.Driver { return New() }),
	})
}
