package memcached

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CountConns implements drivers.ConnCounter: the connections the
// instance accepted, as stats counts them.
func (f *finder) CountConns(ctx context.Context) (int64, error) {
	return f.stat(ctx, "total_connections")
}

// ConnCounter implements drivers.ConnCounter.
func (*finder) ConnCounter() string { return "stats total_connections" }

// stat is the count name in the instance's stats, over every connection.
func (f *finder) stat(ctx context.Context, name string) (int64, error) {
	f.deadline(ctx)
	out, err := command(f.nc, "stats")
	if err != nil {
		return 0, fmt.Errorf("stats: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "STAT "+name+" "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("stats has no %s", name)
}
