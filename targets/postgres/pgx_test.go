package postgres_test

import (
	"context"

	"github.com/jackc/pgx/v5"
)

func pgxConnect(cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	return pgx.ConnectConfig(context.Background(), cfg)
}
