package pgbouncer

import (
	"context"
	"net"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/postgres"
)

const (
	// name is the target's name; PgBouncer's binary and its admin
	// console's database are called the same.
	name    = "pgbouncer"
	server  = name
	Console = name
	// osUser is who PgBouncer runs as when dbsock is root (it refuses
	// root), the same user as the PostgreSQL behind it.
	osUser = postgres.OSUser
	// serving says what serves the target, whichever provider; the
	// route from PgBouncer to PostgreSQL is said with the server, as
	// PgBouncer's console shows it (backendLeg).
	serving = "PgBouncer in transaction pooling in front of PostgreSQL"
)

var external = targets.External{
	Product:    "PgBouncer",
	SocketHelp: "external PgBouncer socket directory (the socket is DIR/.s.PGSQL.PORT, PORT from --pgbouncer-addr)",
	SocketFile: postgres.SocketFile,
	User:       "dbsock", UserHelp: "external PgBouncer user, in its admin_users or stats_users (dbsock reads SHOW CLIENTS, and SHOW SERVERS for its route to PostgreSQL)",
	DB: postgres.Database, DBHelp: "external PgBouncer database; dbsock creates its table (user) in the database behind it",
}

func init() {
	targets.Register(targets.Target{
		Target: supply.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name),
			Serving: serving, Hop: true},
		Order:     45,
		InFrontOf: postgres.Name,
		Short:     "the postgres lookup through PgBouncer (transaction pooling) in front of PostgreSQL",
		ServedBy:  "PgBouncer with a PostgreSQL behind it (on its Unix socket where dbsock starts them), local, container or yours",
		Library:   "github.com/jackc/pgx/v5",
		Settings:  func() targets.Settings { return DefaultSettings() },
		Flags:     external.Flags(name),
		Help:      postgres.Help(), // the postgres target's ops, through the pooler
		Doctor: &targets.Doctor{
			Name:      "PgBouncer",
			WellKnown: []string{"/run/postgresql/.s.PGSQL.6432", "/var/run/postgresql/.s.PGSQL.6432", "/tmp/.s.PGSQL.6432"},
			Match:     func(base string) bool { return base == ".s.pgsql.6432" },
			Localhost: "libpq and pgx use this socket's directory when the host is a directory; host localhost means TCP. PgBouncer listens on 6432 by default.",
			Answer: func(context.Context, net.Conn, string) string {
				return "PgBouncer or PostgreSQL (its version needs a login)"
			},
		},
	})
}

// Settings are the pgbouncer target's settings: a PgBouncer the user runs
// (dbsock run's --pgbouncer-* flags), none by default.
type Settings struct {
	targets.Server `json:"-"`
}

// DefaultSettings are the pgbouncer target's settings at their defaults.
func DefaultSettings() *Settings { return &Settings{Server: external.Server(name)} }

// Validate implements targets.Settings.
func (*Settings) Validate() error { return nil }

// Driver implements targets.Settings.
func (*Settings) Driver(w drivers.Workload) drivers.Driver { return New(w) }
