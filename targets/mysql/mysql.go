// Package mysql registers the mysql target: a primary-key SELECT through
// go-sql-driver/mysql against MySQL or MariaDB.
package mysql

import (
	"context"
	"io"
	"net"
	"strings"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

const (
	name = "mysql"
	Name = name // the target's name, for the hops in front of it
)

var external = targets.External{
	Product:    "MySQL",
	SocketHelp: "external MySQL Unix socket path",
	User:       "root", UserHelp: "external MySQL user",
	DB: "dbsock", DBHelp: "external MySQL database; dbsock creates its table (user) in it",
	PasswordFlag: true,
}

func init() {
	targets.Register(targets.Target{
		Agents: &agents.Support{
			NoTLS: "MariaDB shows no other session's TLS without performance_schema, so dbsock could not verify an agent's TLS",
		},
		Target: supply.Target{Name: name, Recipe: recipe, SocketFlag: external.SocketFlag(name)},
		Order:  10, InAll: true,
		Short:    "SELECT by primary key, statement prepared once (MySQL or MariaDB)",
		ServedBy: "MySQL (mysqld) or MariaDB (mariadbd), local, container or yours",
		Library:  "github.com/go-sql-driver/mysql",
		Settings: func() targets.Settings { return DefaultSettings() },
		Flags: append(external.Flags(name),
			targets.Flag{Field: "Mode", Name: "mysql-mode", Help: "how the lookup reaches MySQL: " + strings.Join(Modes, ", ")}),
		Help:  targets.Help{Query: "SQL with ?", KeysQuery: "SQL returning keys in its first column", Update: "UPDATE ... SET n = n + 1"},
		Quiet: Quiet,
		Kind: &drivers.Kind{
			Greeting:   sniffGreeting,
			SocketMode: "MySQL and MariaDB always create 0777 sockets",
			ExecSetup:  "MariaDB's performance_schema",
		},
		Doctor: &targets.Doctor{
			Name:      "MySQL/MariaDB",
			WellKnown: []string{"/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/var/lib/mysql/mysql.sock", "/tmp/mysql.sock"},
			Match:     func(base string) bool { return strings.Contains(base, name) || strings.Contains(base, "mariadb") },
			Localhost: "the MySQL client library (mysql CLI, libmysqlclient, PHP, Python mysqlclient) takes host localhost to mean its default socket; 127.0.0.1 means TCP. The Go driver never does: localhost is TCP, the socket is unix(PATH).",
			Answer:    greeting,
		},
	})
}

// Settings are the mysql target's settings (dbsock run's --mysql-*
// flags).
type Settings struct {
	// Mode is how the lookup reaches the server: one of Modes.
	Mode string `json:"mode"`
	// Server is a MySQL the user runs (none by default).
	targets.Server `json:"-"`
}

// DefaultSettings are the mysql target's settings at their defaults.
func DefaultSettings() *Settings {
	return &Settings{Mode: ModePrepared, Server: external.Server(name)}
}

// Validate implements targets.Settings.
func (s *Settings) Validate() error {
	return targets.OneOf(targets.Field(name, "Mode"), s.Mode, Modes...)
}

// Driver implements targets.Settings.
func (s *Settings) Driver(w drivers.Workload) drivers.Driver { return New(s.Mode, w) }

// greeting reads the handshake a MySQL-protocol server sends first: it
// names the server version without any credentials.
func greeting(_ context.Context, c net.Conn, _ string) string {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "no greeting: " + err.Error()
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	if n < 2 || n > 1<<16 {
		return "not a MySQL greeting"
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return "short greeting: " + err.Error()
	}
	if body[0] == 0xff {
		return "the server refused the connection: " + string(body[3:])
	}
	version := handshakeVersion(body)
	if version == "" {
		return "not a MySQL greeting"
	}
	product := "MySQL"
	if strings.Contains(strings.ToLower(version), "mariadb") {
		product = "MariaDB"
	}
	return product + " " + version
}

// handshakeVersion is the server version in the body of a MySQL handshake
// packet (protocol 10, then the version up to a NUL byte); "" when body is
// not one.
func handshakeVersion(body []byte) string {
	if len(body) < 2 || body[0] != 10 {
		return ""
	}
	v, _, ok := strings.Cut(string(body[1:]), "\x00")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(v, "5.5.5-") // MariaDB's prefix for old clients
}

// sniffGreeting implements drivers.Kind.Greeting: first is a MySQL
// handshake packet (3-byte length, sequence 0, body).
func sniffGreeting(first []byte) string {
	if len(first) < 6 || first[3] != 0 {
		return ""
	}
	if v := handshakeVersion(first[4:]); v != "" {
		return "a MySQL-protocol server (" + v + ")"
	}
	return ""
}
