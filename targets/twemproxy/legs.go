package twemproxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets/redis"
)

// Each leg of a connection through nutcracker is checked where it runs.
// nutcracker shows no connection of its own, only counts: the client's
// leg is checked by the pool that counted it (a new client connection,
// the requests sent on it), each pool listening where its path's
// client's leg names; the leg to Redis by the pool's server connections
// and by Redis's own list of its clients, every one of nutcracker's over
// TCP from 127.0.0.1. A connection that another pool counted fails its
// check, with nutcracker's counts quoted.

// hop is what dbsock knows of one nutcracker it started, by the address
// of one of its pools.
type hop struct {
	stats    string        // the stats port's 127.0.0.1:PORT
	interval time.Duration // the stats interval (-i)
	pool     string        // the pool dbsock's endpoint there names: its path
	redis    drivers.Endpoint
}

// hops maps each address of a nutcracker dbsock started (its pools') to
// its hop, while it runs.
var hops sync.Map

// hopOf is the hop that serves ep.
func hopOf(ep drivers.Endpoint) (hop, error) {
	if h, ok := hops.Load(ep.Address); ok {
		return h.(hop), nil
	}
	return hop{}, fmt.Errorf("no nutcracker dbsock started listens at %s, so its stats port is not known: --via twemproxy measures a nutcracker dbsock starts (--provider local)", ep)
}

// settled reads the stats once every request sent before the call is in
// them: nutcracker's event loop hands its counts over at least once an
// interval, its stats thread adds them up once an interval, and the stats
// port answers with the last sum.
func (h hop) settled(ctx context.Context) (stats, error) {
	if err := sleep(ctx, 4*h.interval); err != nil {
		return stats{}, err
	}
	return readStats(ctx, h.stats)
}

// until reads the stats every interval, for up to 2 s, until ok says the
// hop's pool is as wanted; it returns the last read and whether it was.
func (h hop) until(ctx context.Context, ok func(poolStats) bool) (stats, poolStats, bool, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		s, err := readStats(ctx, h.stats)
		if err != nil {
			return s, poolStats{}, false, err
		}
		p, err := s.pool(h.pool)
		if err != nil {
			return s, p, false, err
		}
		if ok(p) || time.Now().After(deadline) {
			return s, p, ok(p), nil
		}
		if err := sleep(ctx, h.interval); err != nil {
			return s, p, false, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// poolLeg checks that the path's pool counted what a connection sent: its
// requests moved from before by at least want (what names them), and it
// holds a connection to Redis.
func poolLeg(path drivers.Transport, before, after poolStats, want int64, what string) (string, error) {
	moved := after.requests() - before.requests()
	if moved < want {
		return "", fmt.Errorf("nutcracker's pool %s counted %d requests, not the %d of %s: the connection on the %s path did not reach the pool its path names (stats of pool %s before: %s; after: %s)",
			path, moved, want, what, path, path, before, after)
	}
	if after.serverConnections() < 1 {
		return "", fmt.Errorf("nutcracker's pool %s holds no connection to Redis after %s (stats: %s)", path, what, after)
	}
	return fmt.Sprintf("nutcracker's stats: pool %s counted %d requests for %s (%s)", path, moved, what, after), nil
}

// serverLeg reads Redis's list of its clients over a connection of
// dbsock's own to its TCP address, and checks nutcracker's there.
func (h hop) serverLeg(ctx context.Context) (string, error) {
	c := goredis.NewClient(redis.Options(h.redis))
	defer c.Close()
	conn := c.Conn()
	defer conn.Close()
	self, err := conn.ClientID(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("ask Redis at %s for dbsock's own CLIENT ID: %w", h.redis, err)
	}
	list, err := conn.ClientList(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("ask Redis at %s for CLIENT LIST: %w", h.redis, err)
	}
	return clientsLeg(list, self)
}

// clientsLeg checks Redis's CLIENT LIST: every client but dbsock's own
// (id self) is nutcracker's, over TCP from 127.0.0.1, and there is one.
func clientsLeg(list string, self int64) (string, error) {
	var addrs []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(" "+line+" ", " id="+strconv.FormatInt(self, 10)+" ") {
			continue
		}
		v, err := redis.ParseClientInfo(line)
		if err != nil {
			return "", err
		}
		if v.Transport.Seen() != drivers.TCP || !strings.HasPrefix(v.Peer, "127.0.0.1:") {
			return "", fmt.Errorf("Redis sees a client over %s from %q, where nutcracker reaches it over 127.0.0.1 TCP only (CLIENT LIST: %s)", v.Transport.Label(), v.Peer, line)
		}
		addrs = append(addrs, v.Peer)
	}
	if len(addrs) == 0 {
		return "", errors.New("Redis's CLIENT LIST shows no client but dbsock's own: nutcracker holds no connection to it")
	}
	clients := "1 client"
	if len(addrs) > 1 {
		clients = strconv.Itoa(len(addrs)) + " clients"
	}
	return fmt.Sprintf("Redis's CLIENT LIST: %s but dbsock's own, each over TCP from 127.0.0.1 (addr %s): nutcracker's, one per pool",
		clients, strings.Join(addrs, ", ")), nil
}
