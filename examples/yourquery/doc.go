// Package yourquery is a module a Go developer copies to measure their own
// code over TCP and a Unix socket with dbsock, in their own tests: one
// package per client library, each a test with dbsock.Compare and a
// benchmark with dbsocktest.Benchmark.
//
//	orders    a PostgreSQL query through pgx
//	sessions  a Redis GET through go-redis
//	cache     a memcached Get through gomemcache
//
// Each package compiles only its own client library: see deps_test.go.
package yourquery
