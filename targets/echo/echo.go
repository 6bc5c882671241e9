// Package echo registers the echo target: a ping-pong with dbsock's own
// echo server in a child process, the transport floor through Go's runtime.
package echo

import (
	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/compose/child"
	"github.com/dbsock/dbsock/drivers"
	echodrv "github.com/dbsock/dbsock/drivers/echo"
	"github.com/dbsock/dbsock/targets"
)

func init() {
	targets.Register(targets.Target{
		Name: child.Echo, Order: 50, Own: true,
		Short:    "4-byte ping-pong with dbsock's own echo server: the transport through Go's runtime",
		ServedBy: "dbsock's echo server in a child process (Go netpoller on both sides)",
		Server:   compose.ChildRecipe(child.Echo),
		Settings: targets.Own(func(size int) drivers.Driver { return echodrv.New(size) }),
	})
}
