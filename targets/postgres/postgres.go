// Package postgres registers the postgres target: a primary-key SELECT
// through pgx against PostgreSQL.
package postgres

import (
	"context"
	"net"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

// name is the target's name; PostgreSQL's server binary, its system user
// and its default database are all called the same.
const (
	name     = "postgres"
	server   = name
	osUser   = name
	Database = name
)

var external = targets.External{
	Product:    "PostgreSQL",
	SocketHelp: "external PostgreSQL socket directory (the socket is DIR/.s.PGSQL.PORT, PORT from --postgres-addr)",
	SocketFile: SocketFile,
	User:       name, UserHelp: "external PostgreSQL user (password from $DBSOCK_POSTGRES_PASSWORD)",
	DB: name, DBHelp: "external PostgreSQL database; dbsock creates its table (user) in it",
}

func init() {
	targets.Register(targets.Target{
		Target:   compose.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name)},
		Order:    40,
		Short:    "SELECT by primary key, statement prepared once (PostgreSQL)",
		ServedBy: "PostgreSQL, local, container or yours",
		Library:  "github.com/jackc/pgx/v5",
		Settings: bind,
		Doctor: &targets.Doctor{
			Name:      "PostgreSQL",
			WellKnown: []string{"/run/postgresql/.s.PGSQL.5432", "/var/run/postgresql/.s.PGSQL.5432", "/tmp/.s.PGSQL.5432"},
			Match:     func(base string) bool { return strings.HasPrefix(base, ".s.pgsql.") },
			Localhost: "libpq and pgx use this socket's directory when no host is given or the host is a directory; host localhost means TCP.",
			Answer:    func(context.Context, net.Conn, string) string { return "PostgreSQL (its version needs a login)" },
		},
	})
}

type settings struct{ ext *targets.ExternalFlags }

func bind(f *pflag.FlagSet) targets.Settings { return &settings{ext: external.Bind(f, name)} }

func (s *settings) Validate() error { return nil }

func (s *settings) Driver(valueSize int) drivers.Driver { return New(valueSize) }

func (s *settings) External() (compose.Pair, error) { return s.ext.Pair() }
