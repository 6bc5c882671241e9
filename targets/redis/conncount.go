package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CountConns implements drivers.ConnCounter: the connections the server
// accepted, as INFO stats counts them.
func (f *finder) CountConns(ctx context.Context) (int64, error) {
	info, err := f.conn.Info(ctx, "stats").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO stats: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_connections_received:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO stats has no total_connections_received")
}

// ConnCounter implements drivers.ConnCounter.
func (*finder) ConnCounter() string { return "INFO stats total_connections_received" }
