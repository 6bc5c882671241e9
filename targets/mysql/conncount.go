package mysql

import (
	"context"
	"fmt"
)

// CountConns implements drivers.ConnCounter: the connection attempts the
// server counts (its Connections status), over every client.
func (f *finder) CountConns(ctx context.Context) (int64, error) {
	var name string
	var n int64
	if err := f.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Connections'").Scan(&name, &n); err != nil {
		return 0, fmt.Errorf("SHOW GLOBAL STATUS LIKE 'Connections': %w", err)
	}
	return n, nil
}

// ConnCounter implements drivers.ConnCounter.
func (*finder) ConnCounter() string { return "the Connections status" }
