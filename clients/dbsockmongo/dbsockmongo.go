// Package dbsockmongo points go.mongodb.org/mongo-driver/v2 at a dbsock
// endpoint, and makes the mongo target known to dbsock.Start.
package dbsockmongo

import (
	"context"
	"net"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/targets/mongo" // registers the mongo target
)

// Options are MongoDB Go driver options for ep (a direct connection, a
// pool of one); they dial through dbsock.Dial. Use them with mongo.Connect.
func Options(ep dbsock.Endpoint) (*options.ClientOptions, error) {
	o, err := mongo.ClientOptions(ep)
	if err != nil {
		return nil, err
	}
	return o.SetDialer(dialer(dbsock.Dial(ep))), nil
}

// dialer is a dial function as the driver's ContextDialer.
type dialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}
