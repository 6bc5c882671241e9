package postgres

import (
	"context"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
)

// minSessionsVersion is the first server_version_num whose
// pg_stat_database counts sessions (PostgreSQL 14).
const minSessionsVersion = 140000

// sessionFinder is a finder whose server counts the sessions established
// to each database (PostgreSQL 14 and later): a drivers.ConnCounter.
type sessionFinder struct{ *finder }

// withSessions is f as a drivers.ConnCounter where its server counts
// sessions, else f.
func withSessions(ctx context.Context, f *finder) (drivers.Finder, error) {
	var v int
	if err := f.c.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&v); err != nil {
		return nil, fmt.Errorf("read server_version_num: %w", err)
	}
	if v < minSessionsVersion {
		return f, nil
	}
	return sessionFinder{f}, nil
}

// CountConns implements drivers.ConnCounter: the sessions established to
// the connection's database, as pg_stat_database counts them. A session
// is counted once its backend reports its statistics (at its first idle
// moment, at the latest at its exit), so the count may lag a connection
// by a moment; the audit reads it again until it settles.
func (f sessionFinder) CountConns(ctx context.Context) (int64, error) {
	var n int64
	// Each statement is a transaction of its own: the statistics are read
	// afresh (stats_fetch_consistency caches them within one).
	err := f.c.QueryRow(ctx, "SELECT sessions FROM pg_stat_database WHERE datname = current_database()").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read pg_stat_database.sessions: %w", err)
	}
	return n, nil
}

// ConnCounter implements drivers.ConnCounter.
func (sessionFinder) ConnCounter() string { return "pg_stat_database sessions" }
