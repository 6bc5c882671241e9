package dbsockpg_test

import (
	"fmt"
	"log"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockpg"
)

// A pgx configuration for the Unix socket of a PostgreSQL server.
func ExampleConfig() {
	ep := dbsock.Endpoint{Transport: dbsock.Unix, Address: "/tmp/dbsock-1/.s.PGSQL.5432", User: "app", Database: "shop"}
	cfg, err := dbsockpg.Config(ep)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host, cfg.Port, cfg.User, cfg.Database, cfg.TLSConfig == nil, cfg.DialFunc != nil)
	// Output: /tmp/dbsock-1 5432 app shop true true
}
