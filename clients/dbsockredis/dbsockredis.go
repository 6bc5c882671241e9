// Package dbsockredis points github.com/redis/go-redis/v9 at a dbsock
// endpoint, and makes the redis target known to dbsock.Start.
package dbsockredis

import (
	goredis "github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/targets/redis" // registers the redis target
)

// Options are go-redis options for ep (a pool of one); they dial through
// dbsock.Dial. Use them with redis.NewClient.
func Options(ep dbsock.Endpoint) *goredis.Options {
	o := redis.Options(ep)
	o.Dialer = dbsock.Dial(ep)
	return o
}
