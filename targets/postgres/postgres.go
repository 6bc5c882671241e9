// Package postgres registers the postgres target: a primary-key SELECT
// through pgx against PostgreSQL.
package postgres

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// name is the target's name; PostgreSQL's server binary, the system user
// it runs as when dbsock is root (OSUser) and its default database
// (Database) are all called the same.
const (
	name     = "postgres"
	Name     = name // the target's name, for the targets in front of it
	server   = name
	OSUser   = name
	Database = name
)

var external = targets.External{
	Product:    "PostgreSQL",
	SocketHelp: "external PostgreSQL socket directory (the socket is DIR/.s.PGSQL.PORT, PORT from --postgres-addr)",
	SocketFile: SocketFile,
	User:       name, UserHelp: "external PostgreSQL user (password from $DBSOCK_POSTGRES_PASSWORD)",
	DB: name, DBHelp: "external PostgreSQL database; dbsock creates its table (user) in it",
}

// help is how the postgres target's ops are written (pgbouncer's too,
// through the pooler).
var help = targets.Help{Query: "SQL with $1", KeysQuery: "SQL returning keys in its first column", Update: "UPDATE ... SET n = n + 1", Pipeline: "pgx batch"}

// Help is how the postgres target's ops are written.
func Help() targets.Help { return help }

func init() {
	targets.Register(targets.Target{
		Target:   supply.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name)},
		Order:    40,
		Short:    "SELECT by primary key, statement prepared once (PostgreSQL)",
		ServedBy: "PostgreSQL, local, container or yours",
		Library:  "github.com/jackc/pgx/v5",
		Settings: func() targets.Settings { return DefaultSettings() },
		Flags: append(external.Flags(name),
			targets.Flag{Field: "Mode", Name: "postgres-mode", Help: "how the lookup reaches PostgreSQL: prepared (a named statement per connection) or exec (an unnamed statement per op, as poolers in transaction mode need)"}),
		Help: help,
		Kind: &drivers.Kind{Waits: "PostgreSQL", ExecSetup: "PostgreSQL's pg_stat_statements"},
		Doctor: &targets.Doctor{
			Name:      "PostgreSQL",
			WellKnown: []string{"/run/postgresql/.s.PGSQL.5432", "/var/run/postgresql/.s.PGSQL.5432", "/tmp/.s.PGSQL.5432"},
			Match:     func(base string) bool { return strings.HasPrefix(base, ".s.pgsql.") },
			Localhost: "libpq and pgx use this socket's directory when no host is given or the host is a directory; host localhost means TCP.",
			Answer:    sslRequest,
		},
	})
}

// Settings are the postgres target's settings (dbsock run's --postgres-*
// flags).
type Settings struct {
	// Mode is how the lookup reaches the server: one of Modes.
	Mode string `json:"mode"`
	// Server is a PostgreSQL the user runs (none by default).
	targets.Server `json:"-"`
}

// DefaultSettings are the postgres target's settings at their defaults.
func DefaultSettings() *Settings {
	return &Settings{Mode: ModePrepared, Server: external.Server(name)}
}

// Validate implements targets.Settings.
func (s *Settings) Validate() error {
	return targets.OneOf(targets.Field(name, "Mode"), s.Mode, Modes...)
}

// Driver implements targets.Settings.
func (s *Settings) Driver(w drivers.Workload) drivers.Driver { return NewMode(s.Mode, w) }

// StartLocal starts a private PostgreSQL with the local provider, for
// targets that put something in front of it (a pooler).
var StartLocal = localServer

// sslRequest asks the server at c whether it speaks TLS, the one question
// PostgreSQL (and PgBouncer) answers without a login: 'S' or 'N'.
func sslRequest(ctx context.Context, c net.Conn, _ string) string {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}); err != nil {
		return "no answer: " + err.Error()
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return "no answer to PostgreSQL's SSLRequest (" + err.Error() + "): not a PostgreSQL server, or a hung one"
	}
	switch b[0] {
	case 'S', 'N':
		return "PostgreSQL protocol (it answered the SSLRequest; its version needs a login)"
	}
	return fmt.Sprintf("not PostgreSQL: it answered the SSLRequest with %q", b[0])
}
