// Package dbsockmemcache points github.com/bradfitz/gomemcache at a dbsock
// endpoint, and makes the memcached target known to dbsock.Start.
//
// memcached listens on TCP or on a Unix socket, never both, so the
// memcached dbsock starts is two processes, one per endpoint: an item set
// over one endpoint is not there over the other. Load your data over each
// (dbsock.CompareOptions.Prepare is called once per endpoint).
package dbsockmemcache

import (
	"github.com/bradfitz/gomemcache/memcache"

	"github.com/dbsock/dbsock"
	"github.com/dbsock/dbsock/targets/memcached" // registers the memcached target
)

// Client is a gomemcache client of ep's server (one idle connection, a 10 s
// timeout); it dials through dbsock.Dial and logs in with ep's user and
// password, as the memcached dbsock starts requires.
func Client(ep dbsock.Endpoint) *memcache.Client {
	return memcached.NewClient(ep, dbsock.Dial(ep))
}
