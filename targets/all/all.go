// Package all registers every target dbsock ships: import it for its side
// effect. Adding a target is one more import line here.
package all

import (
	_ "github.com/dbsock/dbsock/targets/echo"
	_ "github.com/dbsock/dbsock/targets/floor"
	_ "github.com/dbsock/dbsock/targets/grpc"
	_ "github.com/dbsock/dbsock/targets/haproxy"
	_ "github.com/dbsock/dbsock/targets/http"
	_ "github.com/dbsock/dbsock/targets/memcached"
	_ "github.com/dbsock/dbsock/targets/mongo"
	_ "github.com/dbsock/dbsock/targets/mysql"
	_ "github.com/dbsock/dbsock/targets/pgbouncer"
	_ "github.com/dbsock/dbsock/targets/postgres"
	_ "github.com/dbsock/dbsock/targets/redis"
	_ "github.com/dbsock/dbsock/targets/twemproxy"
)
