package compose

import "context"

// The server recipes of the targets dbsock knows: how the local provider
// starts each server from binaries on this machine, and which image and
// command line the docker and compose providers use. The registry (package
// targets) pairs each with its client driver.
var (
	// MySQL is mysqld (Oracle MySQL) or mariadbd locally; mysql:8.4 in a
	// container.
	MySQL = Recipe{Local: localMySQL, Container: &Container{Image: "mysql:8.4", Offline: "dbsock/mariadb:10.11",
		Spec: mysqlContainer, ComposeSecrets: []string{"DBSOCK_MYSQL_ROOT_PASSWORD"}}}
	// Redis is redis-server locally; redis:7.4 in a container.
	Redis = Recipe{Local: localRedis, Container: &Container{Image: "redis:7.4", Offline: "dbsock/redis:7.0", Spec: redisContainer}}
	// Mongo is mongod, or FerretDB speaking its wire protocol, locally;
	// mongo:7.0 in a container.
	Mongo = Recipe{Local: localMongo, Container: &Container{Image: "mongo:7.0", Offline: "dbsock/ferretdb:1.24", Spec: mongoContainer}}
	// Postgres is PostgreSQL from Debian's versioned directory or PATH
	// locally; postgres:16 in a container.
	Postgres = Recipe{Local: localPostgres, Container: &Container{Image: "postgres:16", Offline: "dbsock/postgres:15", Spec: postgresContainer}}
)

// ChildRecipe is one of dbsock's own servers (package child), run as a
// local child process: they have no image.
func ChildRecipe(kind string) Recipe {
	return Recipe{Local: func(ctx context.Context, l *Local, name string) (*Server, error) {
		return l.childServer(ctx, name, kind)
	}}
}
