package targets

import (
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
)

// External says which flags point dbsock at a server of one target that
// the user already runs.
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

// ExternalFlags hold the parsed flags of one target's external server.
type ExternalFlags struct {
	name, passwordFile string
	addr, socket       string
	user, db, password string
	tlsAddr, tlsCA     string
	tlsInsecure        bool
	spec               External
}

// SocketFlag returns the flag that gives the socket for spec.
func (spec External) SocketFlag(name string) string {
	if spec.SocketFile != nil {
		return "--" + name + "-socket-dir"
	}
	return "--" + name + "-socket"
}

// Bind adds spec's flags for target name to f; a nil f binds nothing and
// gives the defaults.
func (spec External) Bind(f *pflag.FlagSet, name string) *ExternalFlags {
	x := &ExternalFlags{name: name, spec: spec, user: spec.User, db: spec.DB}
	if f == nil {
		return x
	}
	f.StringVar(&x.addr, name+"-addr", "", "external "+spec.Product+" TCP address HOST:PORT (on loopback)")
	f.StringVar(&x.socket, strings.TrimPrefix(spec.SocketFlag(name), "--"), "", spec.SocketHelp)
	if spec.UserHelp != "" {
		f.StringVar(&x.user, name+"-user", spec.User, spec.UserHelp)
	}
	if spec.PasswordFlag {
		f.StringVar(&x.password, name+"-password", "", "external "+spec.Product+" password (prefer $"+x.envVar()+")")
	}
	if spec.DBHelp != "" {
		f.StringVar(&x.db, name+"-db", spec.DB, spec.DBHelp)
	}
	f.StringVar(&x.passwordFile, name+"-password-file", "", "read the external "+name+" password from this file (first line)")
	f.StringVar(&x.tlsCA, name+"-tls-ca", "", "the tls path to the external "+spec.Product+": trust the CA certificates in this PEM file (the server's certificate must name its address or localhost)")
	f.StringVar(&x.tlsAddr, name+"-tls-addr", "", "the external "+spec.Product+"'s TLS address HOST:PORT on loopback, where it serves TLS on a port of its own (default: --"+name+"-addr)")
	f.BoolVar(&x.tlsInsecure, name+"-tls-insecure", false, "the tls path to the external "+spec.Product+" without verifying its certificate (the report says so)")
	return x
}

// tlsPath is the tls path of the flags given, with creds: none without
// --NAME-tls-ca or --NAME-tls-insecure.
func (x *ExternalFlags) tlsPath(creds drivers.Endpoint) (drivers.Endpoint, error) {
	if x.tlsCA == "" && !x.tlsInsecure {
		if x.tlsAddr != "" {
			return drivers.Endpoint{}, fmt.Errorf("--%s-tls-addr %s: say which CA to trust with --%s-tls-ca FILE (or --%s-tls-insecure)", x.name, x.tlsAddr, x.name, x.name)
		}
		return drivers.Endpoint{}, nil
	}
	if x.tlsCA != "" && x.tlsInsecure {
		return drivers.Endpoint{}, fmt.Errorf("--%s-tls-ca and --%s-tls-insecure: give one (a CA to verify the server with, or no verification)", x.name, x.name)
	}
	ep := creds
	ep.Transport, ep.Address = drivers.TLS, cmp.Or(x.tlsAddr, x.addr)
	host, _, _ := strings.Cut(ep.Address, ":")
	if x.tlsInsecure {
		ep.TLS, ep.TLSTrust = drivers.InsecureTLS(), "nothing: the server's certificate is not verified (--"+x.name+"-tls-insecure)"
	} else {
		pool, pem, err := drivers.ReadCAs(x.tlsCA)
		if err != nil {
			return drivers.Endpoint{}, fmt.Errorf("--%s-tls-ca: %v", x.name, err)
		}
		ep.TLS, ep.TLSRoots, ep.TLSTrust = drivers.LoopbackTLS(pool, host), pem, "the CAs in "+x.tlsCA+" (--"+x.name+"-tls-ca)"
	}
	if err := ep.Validate(); err != nil {
		return drivers.Endpoint{}, fmt.Errorf("--%s-tls-addr: %v", x.name, err)
	}
	return ep, nil
}

func (x *ExternalFlags) envVar() string { return "DBSOCK_" + strings.ToUpper(x.name) + "_PASSWORD" }

// Pair builds the endpoints given, reading the password from
// --NAME-password, $DBSOCK_NAME_PASSWORD or --NAME-password-file (the
// file wins), and validating every address given.
func (x *ExternalFlags) Pair() (compose.Pair, error) {
	if x == nil {
		return compose.Pair{}, nil
	}
	password := x.password
	if password == "" {
		password = os.Getenv(x.envVar())
	}
	if x.passwordFile != "" {
		b, err := os.ReadFile(x.passwordFile)
		if err != nil {
			return compose.Pair{}, fmt.Errorf("--%s-password-file: %v", x.name, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		password = strings.TrimRight(line, "\r")
		if password == "" {
			return compose.Pair{}, fmt.Errorf("--%s-password-file %s: its first line is empty; put the password on it (for a server without a password, give no password file)", x.name, x.passwordFile)
		}
	}
	socket := x.socket
	if x.spec.SocketFile != nil && socket != "" {
		socket = x.spec.SocketFile(socket, portOf(x.addr))
	}
	creds := drivers.Endpoint{User: x.user, Password: password, Database: x.db}
	tcp, unix := creds, creds
	tcp.Transport, tcp.Address = drivers.TCP, x.addr
	unix.Transport, unix.Address = drivers.Unix, socket
	p := compose.Pair{TCP: tcp, Unix: unix}
	var err error
	if p.TCP.Address != "" {
		if err := p.TCP.Validate(); err != nil {
			return p, fmt.Errorf("--%s-addr: %v", x.name, err)
		}
	}
	if p.Unix.Address != "" {
		if err := p.Unix.Validate(); err != nil {
			return p, fmt.Errorf("%s: %v", x.spec.SocketFlag(x.name), err)
		}
		if what := drivers.NotASocket(p.Unix.Address); what != "" {
			return p, fmt.Errorf("%s: %s", x.spec.SocketFlag(x.name), what)
		}
	}
	if p.TLS, err = x.tlsPath(creds); err != nil {
		return p, err
	}
	if p.Given() && (p.TCP.Address == "" || p.Unix.Address == "") {
		return p, fmt.Errorf("%s: give both --%s-addr and %s: dbsock compares the two transports of one server", x.name, x.name, x.spec.SocketFlag(x.name))
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

// OneOf checks a string flag against its accepted values.
func OneOf(flag, value string, accepted ...string) error {
	for _, a := range accepted {
		if value == a {
			return nil
		}
	}
	return fmt.Errorf("--%s %q is not accepted; use one of: %s", flag, value, strings.Join(accepted, ", "))
}
