package dbsockmemcache_test

import (
	"fmt"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmemcache"
)

// A gomemcache client of a memcached server's Unix socket.
func ExampleClient() {
	c := dbsockmemcache.Client(dbsock.Endpoint{Transport: dbsock.Unix, Address: "/tmp/dbsock-1/memcached.sock"})
	fmt.Println(c.DialContext != nil, c.MaxIdleConns, c.Timeout)
	// Output: true 1 10s
}
