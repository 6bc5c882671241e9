// Package dbsockpg points github.com/jackc/pgx/v5 at a dbsock endpoint,
// and makes the postgres and pgbouncer targets known to dbsock.Start.
package dbsockpg

import (
	"github.com/jackc/pgx/v5"

	"github.com/dbsock/dbsock"
	_ "github.com/dbsock/dbsock/targets/pgbouncer" // registers the pgbouncer target
	"github.com/dbsock/dbsock/targets/postgres"    // registers the postgres target
)

// Config is a pgx connection configuration for ep (TLS as the endpoint
// says: off on tcp and unix); it dials through dbsock.Dial. Use it with
// pgx.ConnectConfig, or as a pgxpool.Config's ConnConfig.
func Config(ep dbsock.Endpoint) (*pgx.ConnConfig, error) {
	cfg, err := postgres.Config(ep)
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = dbsock.Dial(ep)
	return cfg, nil
}
