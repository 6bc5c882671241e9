package dbsockredis_test

import (
	"fmt"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockredis"
)

// go-redis options for a Redis server's TCP port on 127.0.0.1.
func ExampleOptions() {
	o := dbsockredis.Options(dbsock.Endpoint{Transport: dbsock.TCP, Address: "127.0.0.1:6379"})
	fmt.Println(o.Network, o.Addr, o.PoolSize, o.MaxRetries, o.Dialer != nil)
	// Output: tcp 127.0.0.1:6379 1 -1 true
}
