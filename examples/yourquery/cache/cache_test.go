// Package cache measures a gomemcache Get over TCP and a Unix socket.
package cache

import (
	"context"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/clients/dbsockmemcache"
	"github.com/dbsock/dbsock/dbsocktest"
)

// put stores the item your op reads. memcached serves TCP or a socket,
// never both, so the memcached dbsock starts is two processes: Compare
// calls put over each endpoint (and again after each restart, which
// empties them).
func put(ctx context.Context, ep dbsock.Endpoint) error {
	c := dbsockmemcache.Client(ep)
	defer c.Close()
	return c.Set(&memcache.Item{Key: "product:42", Value: []byte(`{"name":"lamp","price":19.5}`)})
}

// get is your op: a Get that must find the item (a miss is an error).
func get(ctx context.Context, ep dbsock.Endpoint) (func(context.Context) error, func() error, error) {
	c := dbsockmemcache.Client(ep) // gomemcache, dialing through dbsock.Dial(ep)
	return func(context.Context) error {
		_, err := c.Get("product:42")
		return err
	}, c.Close, nil
}

func TestProductGetOverBothTransports(t *testing.T) {
	srv := dbsocktest.Start(t, "memcached", dbsock.StartOptions{})
	rep, err := dbsock.Compare(context.Background(), srv, "product-get", get, dbsock.CompareOptions{Prepare: put})
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

func BenchmarkProductGet(b *testing.B) {
	srv := dbsocktest.Start(b, "memcached", dbsock.StartOptions{})
	for _, ep := range []dbsock.Endpoint{srv.TCP, srv.Unix} {
		if err := put(context.Background(), ep); err != nil {
			b.Fatal(err)
		}
	}
	dbsocktest.Benchmark(b, srv, get)
}
