package dbsockmongo_test

import (
	"fmt"
	"log"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmongo"
)

// MongoDB driver options for a server's Unix socket.
func ExampleOptions() {
	o, err := dbsockmongo.Options(dbsock.Endpoint{Transport: dbsock.Unix, Address: "/tmp/dbsock-1/mongodb-27017.sock"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Hosts, *o.Direct, *o.MaxPoolSize, o.Dialer != nil)
	// Output: [/tmp/dbsock-1/mongodb-27017.sock] true 1 true
}
