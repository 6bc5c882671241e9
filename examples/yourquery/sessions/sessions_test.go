// Package sessions measures a go-redis GET of a session over TCP and a
// Unix socket.
package sessions

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockredis"
	"github.com/dbsock/dbsock/dbsocktest"
)

// store puts the session your op reads. The Redis dbsock starts keeps no
// data over a restart, so Compare calls it for each server instance
// (CompareOptions.Prepare).
func store(ctx context.Context, ep dbsock.Endpoint) error {
	c := redis.NewClient(dbsockredis.Options(ep))
	defer c.Close()
	return c.Set(ctx, "session:42", "user=7;cart=3", 0).Err()
}

// get is your op: a GET that must find the session.
func get(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
	c := redis.NewClient(dbsockredis.Options(ep))
	return func(ctx context.Context) error {
		v, err := c.Get(ctx, "session:42").Result()
		if err == nil && v == "" {
			err = errors.New("empty session")
		}
		return err
	}, c.Close, nil
}

func TestSessionGetOverBothTransports(t *testing.T) {
	srv := dbsocktest.Start(t, "redis", dbsock.StartOptions{})
	rep, err := dbsock.Compare(context.Background(), srv, "session-get", get, dbsock.CompareOptions{Prepare: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Runs {
		if !r.TransportVerified || r.Errors != 0 {
			t.Errorf("%s instance %d: verified %v (%s), %d errors", r.Transport, r.Instance, r.TransportVerified, r.Evidence, r.Errors)
		}
	}
	s := rep.Summary[0]
	c := s.Against(dbsock.Unix) // the socket against TCP
	if c.SpeedupP50CI == nil {
		t.Fatalf("no interval: %+v", s)
	}
	t.Logf("%s: speedup %.2f× (%.2f–%.2f): %s", s.Target, c.SpeedupP50, c.SpeedupP50CI.Lo, c.SpeedupP50CI.Hi, c.Verdict)
}

func BenchmarkSessionGet(b *testing.B) {
	srv := dbsocktest.Start(b, "redis", dbsock.StartOptions{})
	if err := store(context.Background(), srv.Unix); err != nil {
		b.Fatal(err)
	}
	dbsocktest.Benchmark(b, srv, get)
}
