package targets

import (
	"cmp"
	"os"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
)

// External describes the settings (Server) and flags that point dbsock at
// a server of one target that the user already runs.
type External struct {
	// Product names the server in help texts, e.g. "MySQL".
	Product string
	// SocketHelp is the help of the socket flag.
	SocketHelp string
	// SocketFile, when set, makes the socket flag a directory
	// (--NAME-socket-dir), as libpq takes it: the socket is
	// SocketFile(dir, port of --NAME-addr).
	SocketFile func(dir string, port int) string
	// User and DB, when set, add --NAME-user and --NAME-db with these
	// defaults and help texts.
	User, UserHelp, DB, DBHelp string
	// PasswordFlag adds --NAME-password (shown in shell history, so the
	// environment and --NAME-password-file come first in its help).
	PasswordFlag bool
}

// Server is where a server of one target that the user runs is, and how
// to log in: the fields its flags set (--NAME-addr, --NAME-socket, ...).
// A target's settings embed it; it is no part of a case's JSON (the case
// carries the endpoints it gives, and a password is never written there).
type Server struct {
	// Addr is the TCP address HOST:PORT on loopback; Socket the Unix
	// socket (its directory, for a target whose External has SocketFile).
	Addr, Socket string `json:"-"`
	// User and DB log in (their defaults are External's).
	User, DB string `json:"-"`
	// Password, else $DBSOCK_NAME_PASSWORD; PasswordFile's first line
	// wins over both.
	Password, PasswordFile string `json:"-"`
	// TLSAddr is the TLS address when it is not Addr; TLSCA the CA
	// certificates (PEM) to trust, or TLSInsecure to verify nothing.
	TLSAddr, TLSCA string `json:"-"`
	TLSInsecure    bool   `json:"-"`

	name string
	spec External
}

// SocketFlag returns the flag that gives the socket for spec.
func (spec External) SocketFlag(name string) string {
	if spec.SocketFile != nil {
		return "--" + name + "-socket-dir"
	}
	return "--" + name + "-socket"
}

// Server is spec's Server of target name at its defaults: no server given.
func (spec External) Server(name string) Server {
	return Server{name: name, spec: spec, User: spec.User, DB: spec.DB}
}

// Flags are the flags of spec's Server for target name, in the order
// help lists them.
func (spec External) Flags(name string) []Flag {
	fs := []Flag{
		{"Addr", name + "-addr", "external " + spec.Product + " TCP address HOST:PORT (on loopback)"},
		{"Socket", strings.TrimPrefix(spec.SocketFlag(name), "--"), spec.SocketHelp},
	}
	if spec.UserHelp != "" {
		fs = append(fs, Flag{"User", name + "-user", spec.UserHelp})
	}
	if spec.PasswordFlag {
		fs = append(fs, Flag{"Password", name + "-password", "external " + spec.Product + " password (prefer $" + envVar(name) + ")"})
	}
	if spec.DBHelp != "" {
		fs = append(fs, Flag{"DB", name + "-db", spec.DBHelp})
	}
	return append(fs,
		Flag{"PasswordFile", name + "-password-file", "read the external " + name + " password from this file (first line)"},
		Flag{"TLSCA", name + "-tls-ca", "the tls path to the external " + spec.Product + ": trust the CA certificates in this PEM file (the server's certificate must name its address or localhost)"},
		Flag{"TLSAddr", name + "-tls-addr", "the external " + spec.Product + "'s TLS address HOST:PORT on loopback, where it serves TLS on a port of its own (default: --" + name + "-addr)"},
		Flag{"TLSInsecure", name + "-tls-insecure", "the tls path to the external " + spec.Product + " without verifying its certificate (the report says so)"},
	)
}

// field names x's field f in errors.
func (x *Server) field(f string) setting.Field { return Field(x.name, f) }

// tlsPath is the tls path of the server given, with creds: none without
// TLSCA or TLSInsecure.
func (x *Server) tlsPath(creds drivers.Endpoint) (drivers.Endpoint, error) {
	if x.TLSCA == "" && !x.TLSInsecure {
		if x.TLSAddr != "" {
			return drivers.Endpoint{}, setting.Err("%s %s: say which CA to trust with %s FILE (or %s)", x.field("TLSAddr"), x.TLSAddr, x.field("TLSCA"), x.field("TLSInsecure"))
		}
		return drivers.Endpoint{}, nil
	}
	if x.TLSCA != "" && x.TLSInsecure {
		return drivers.Endpoint{}, setting.Err("%s and %s: give one (a CA to verify the server with, or no verification)", x.field("TLSCA"), x.field("TLSInsecure"))
	}
	ep := creds
	ep.Transport, ep.Address = supply.TLSPath(), cmp.Or(x.TLSAddr, x.Addr)
	host, _, _ := strings.Cut(ep.Address, ":")
	if x.TLSInsecure {
		ep.TLS, ep.TLSTrust = drivers.InsecureTLS(), "nothing: the server's certificate is not verified, as asked"
	} else {
		pool, pem, err := drivers.ReadCAs(x.TLSCA)
		if err != nil {
			return drivers.Endpoint{}, setting.Err("%s: %w", x.field("TLSCA"), err)
		}
		ep.TLS, ep.TLSRoots, ep.TLSTrust = drivers.LoopbackTLS(pool, host), pem, "the CAs in "+x.TLSCA
	}
	if err := ep.Validate(); err != nil {
		return drivers.Endpoint{}, setting.Err("%s: %w", x.field("TLSAddr"), err)
	}
	return ep, nil
}

func envVar(name string) string { return "DBSOCK_" + strings.ToUpper(name) + "_PASSWORD" }

// External builds the endpoints given, reading the password from
// Password, $DBSOCK_NAME_PASSWORD or PasswordFile (the file wins), and
// validating every address given.
func (x *Server) External() (supply.Pair, error) {
	password := x.Password
	if password == "" && x.name != "" {
		password = os.Getenv(envVar(x.name))
	}
	if x.PasswordFile != "" {
		b, err := os.ReadFile(x.PasswordFile)
		if err != nil {
			return supply.Pair{}, setting.Err("%s: %w", x.field("PasswordFile"), err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		password = strings.TrimRight(line, "\r")
		if password == "" {
			return supply.Pair{}, setting.Err("%s %s: its first line is empty; put the password on it (for a server without a password, give no password file)", x.field("PasswordFile"), x.PasswordFile)
		}
	}
	socket := x.Socket
	if x.spec.SocketFile != nil && socket != "" {
		socket = x.spec.SocketFile(socket, portOf(x.Addr))
	}
	creds := drivers.Endpoint{User: x.User, Password: password, Database: x.DB}
	tcp, unix := supply.Served(creds, x.Addr, socket)
	p := supply.Pair{TCP: tcp, Unix: unix}
	var err error
	if p.TCP.Address != "" {
		if err := p.TCP.Validate(); err != nil {
			return p, setting.Err("%s: %w", x.field("Addr"), err)
		}
	}
	if p.Unix.Address != "" {
		if err := p.Unix.Validate(); err != nil {
			return p, setting.Err("%s: %w", x.field("Socket"), err)
		}
		if what := drivers.NotASocket(p.Unix.Address); what != "" {
			return p, setting.Err("%s: %s", x.field("Socket"), what)
		}
	}
	if p.TLS, err = x.tlsPath(creds); err != nil {
		return p, err
	}
	if p.Given() && (p.TCP.Address == "" || p.Unix.Address == "") {
		return p, setting.Err("%s: give both %s and %s: dbsock compares the two transports of one server", x.name, x.field("Addr"), x.field("Socket"))
	}
	return p, nil
}

// portOf is the port of HOST:PORT, or PostgreSQL's default 5432.
func portOf(addr string) int {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		if p, err := strconv.Atoi(addr[i+1:]); err == nil {
			return p
		}
	}
	return 5432
}

// OneOf checks a string setting, f, against its accepted values.
func OneOf(f setting.Field, value string, accepted ...string) error {
	for _, a := range accepted {
		if value == a {
			return nil
		}
	}
	return setting.Err("%s %q is not accepted; use one of: %s", f, value, strings.Join(accepted, ", "))
}
