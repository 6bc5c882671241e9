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

// packages are the packages above, in that order, with the targets each
// makes known.
var packages = []struct {
	name    string
	targets []string
}{
	{"dbsockmysql", []string{"mysql"}},
	{"dbsockpg", []string{"postgres", "pgbouncer"}},
	{"dbsockredis", []string{"redis"}},
	{"dbsockmongo", []string{"mongo"}},
	{"dbsockmemcache", []string{"memcached"}},
}

// Path is the import path of the package that makes target known ("" and
// false when none does).
func Path(target string) (string, bool) {
	for _, p := range packages {
		for _, t := range p.targets {
			if t == target {
				return "github.com/dbsock/dbsock/clients/" + p.name, true
			}
		}
	}
	return "", false
}

// Targets lists the targets the packages make known, in the order above.
func Targets() []string {
	var out []string
	for _, p := range packages {
		out = append(out, p.targets...)
	}
	return out
}
