// Package postgres registers the postgres target: a primary-key SELECT
// through pgx against PostgreSQL.
package postgres

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

// name is the target's name; PostgreSQL's server binary, the system user
// it runs as when dbsock is root (OSUser) and its default database
// (Database) are all called the same.
const (
	name     = "postgres"
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
			Answer:    sslRequest,
		},
	})
}

type settings struct {
	mode string
	ext  *targets.ExternalFlags
}

func bind(f *pflag.FlagSet) targets.Settings {
	s := &settings{mode: ModePrepared, ext: external.Bind(f, name)}
	if f != nil {
		f.StringVar(&s.mode, "postgres-mode", ModePrepared, "how the lookup reaches PostgreSQL: prepared (a named statement per connection) or exec (an unnamed statement per op, as poolers in transaction mode need)")
	}
	return s
}

func (s *settings) Validate() error { return targets.OneOf("postgres-mode", s.mode, Modes...) }

func (s *settings) Driver(w drivers.Workload) drivers.Driver { return NewMode(s.mode, w) }

// StartLocal starts a private PostgreSQL with the local provider, for
// targets that put something in front of it (a pooler).
var StartLocal = localServer

func (s *settings) External() (compose.Pair, error) { return s.ext.Pair() }

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
