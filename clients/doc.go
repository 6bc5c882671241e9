// Package clients holds one package per database client library, each
// pointing that library at a dbsock endpoint through dbsock.Dial, so that
// dbsock.Compare can check where your op connected. Importing one also
// makes its targets known to dbsock.Start and dbsock.External, and
// compiles only that client library: a test of a PostgreSQL query imports
// dbsock and dbsockpg, and never builds the MongoDB or MySQL drivers.
//
//	dbsockmysql     go-sql-driver/mysql      targets mysql
//	dbsockpg        jackc/pgx/v5             targets postgres, pgbouncer
//	dbsockredis     redis/go-redis/v9        target redis
//	dbsockmongo     mongo-driver/v2          target mongo
//	dbsockmemcache  bradfitz/gomemcache      target memcached
package clients
