// Package http registers the http target: an HTTP/1.1 GET with keep-alive
// to dbsock's own server (net/http) in a child process.
package http

import (
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/supply/child"
	"github.com/dbsock/dbsock/targets"
)

const name = "http"

func init() {
	child.Register(name, newServer)
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: supply.ChildRecipe(name)},
		Order:  70, Own: true,
		Short:    "HTTP/1.1 GET with keep-alive (dbsock's server)",
		ServedBy: "dbsock's HTTP/1.1 server (net/http) in a child process",
		Settings: targets.Own(func(int) drivers.Driver { return New() }),
	})
}
