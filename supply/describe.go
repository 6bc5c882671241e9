package supply

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
)

// A Description is one target's server, described once: what runs (its
// binary, and the arguments of each of its instances), the files it reads
// that hold its password and what it reads on its standard input, its
// socket, its account, the secrets that hand a container its passwords,
// how it serves TLS, and its image. From it come the local processes
// (unless Local is set), the container's command (Spec, which the docker
// provider runs) and its service in compose.yaml (which compose/gen
// writes, and the compose provider runs): each renders the same arguments
// with the values of its own place (At).
type Description struct {
	// Name is the target's, and its compose service's.
	Name string
	// Binary is the server's program: found on this machine by the local
	// provider (Install says how to get it), on PATH in its image.
	Binary, Install string
	// Instances are its processes, started alike: one, or one per
	// transport for a server that cannot serve both at once (local
	// processes of their own; in a container, started by one shell).
	Instances []Instance
	// Socket is its socket's file name in its directory, as the server
	// names it from its port.
	Socket func(port string) string
	// Port is its port in compose.yaml by default (DBSOCK_<NAME>_PORT
	// sets it).
	Port int
	// User and Database are the run's account and database on it ("":
	// the server's default).
	User, Database string
	// Files are files it reads that hold the run's password (Format, with
	// %s for it): locally each is written into its directory (0600, its
	// user's, removed once read and written back while it restarts); in a
	// container its shell writes them from the first secret, into /tmp.
	Files []File
	// Stdin, when set, is what it reads on its standard input (a format
	// with %s for the run's password): locally passed as such, in a
	// container a here-document its shell fills in from the first secret.
	Stdin string
	// Secrets name the files that hand its container its passwords
	// (At.Secret: /sock/NAME with docker, /run/secrets/NAME with compose,
	// written by the provider, removed once read): the first holds the
	// run's password (a bootstrap one when the image's accounts are
	// rotated, Container.Rotate), each other a random one.
	Secrets []string
	// Env is its container's environment: no password (a VAR_FILE
	// variable names a secret's file, At.Secret).
	Env func(At) map[string]string
	// TLS is how it serves TLS with the run's certificate (zero: not).
	TLS TLSMode
	// NoContainerTLS, when set, says why its container serves no TLS
	// (it may name a setting).
	NoContainerTLS error
	// KeyOwner, when set, is the user a server that refuses a key others
	// may read runs as: in a container the key is copied to KeyCopy,
	// that user's, before the image's entrypoint runs (PrivateKeyCmd).
	KeyOwner, KeyCopy string
	// Entrypoint says that the shell of a container with more than a
	// bare command starts each instance through the image's entrypoint
	// (docker-entrypoint.sh), as the image starts its command: for an
	// image whose entrypoint drops root.
	Entrypoint bool
	// Find, when set, finds its binary locally, or says why it cannot
	// (an ErrCannotSupply error); else Binary is looked for.
	Find func(l *Local, target string) (string, error)
	// Prepare, when set, readies a local instance of bin before it
	// starts, once its directory, user and files are there (e.g.
	// initialises its data directory in ls.Dir).
	Prepare func(ctx context.Context, l *Local, ls *LocalServer, bin, password string) error
	// Started, when set, finishes a local instance once it is first
	// ready (e.g. makes the run's account over its socket).
	Started func(ctx context.Context, ls *LocalServer, password string) error
	// LocalReady, when set, is a local instance's readiness given the
	// endpoints it serves (e.g. a real login over each); else it is ready
	// when they accept.
	LocalReady func(eps ...drivers.Endpoint) func(context.Context) error
	// OSUser is the user it runs as locally when dbsock runs as root
	// (nobody when there is none).
	OSUser string
	// StopSignal stops a local instance (SIGTERM when 0; see
	// LocalServer.StopSignal).
	StopSignal syscall.Signal
	// LocalServing says, for the report, what serves its endpoints when
	// more than one local process does.
	LocalServing string
	// Ready, when set, is the container's readiness (e.g. LoginReady).
	Ready func(context.Context, *Server) error
	// Note is its service's comment in compose.yaml.
	Note string
	// Container is its image (Spec and Described are filled in by
	// Recipe).
	Container Container
	// Local, when set, starts it locally instead of Instances (a server
	// whose local set-up its description does not cover yet).
	Local func(ctx context.Context, l *Local, name string) (*Server, error)
}

// An Instance is one process of a described server.
type Instance struct {
	// Name names it in its log file locally (e.g. NAME-tcp).
	Name string
	// Serves says which endpoints it serves: TCP (with TLS), its socket,
	// or both (the zero value).
	Serves Serves
	// Args are its arguments at a, after its binary.
	Args func(a At) []string
}

// Serves says which of a server's endpoints an instance serves.
type Serves int

const (
	// ServesBoth is an instance that serves TCP and the socket.
	ServesBoth Serves = iota
	// ServesTCP serves TCP (and TLS) only.
	ServesTCP
	// ServesUnix serves the socket only.
	ServesUnix
)

func (s Serves) tcp() bool  { return s != ServesUnix }
func (s Serves) unix() bool { return s != ServesTCP }

// A File is a file a server reads that holds the run's password: its name,
// and its content as a format with %s for the password.
type File struct {
	Name, Format string
}

// TLSMode is how a server serves TLS.
type TLSMode int

const (
	// NoTLS: it does not.
	NoTLS TLSMode = iota
	// TLSOnPort: on its one port, to the clients that ask.
	TLSOnPort
	// TLSApart: on a listener of its own, at a second port.
	TLSApart
)

// where is where a described server runs.
type where int

const (
	local where = iota
	container
	composeFile
)

// At is where a described instance runs, as its arguments name it there:
// locally (the values of its private directory and free port), in a
// container dbsock starts, or in compose.yaml's service (the values are
// compose's variables: ${DBSOCK_<NAME>_PORT:-...} and the like).
type At struct {
	// Port is its TCP port; TLSPort, when set, where it serves TLS, with
	// TLS's files (only for an instance that serves TCP).
	Port, TLSPort string
	TLS           TLSFiles
	// Dir is its directory: its private one locally, /sock in a container
	// (the host's socket directory, bind-mounted).
	Dir string
	// Sock is its socket's path.
	Sock string
	// SocketMode is its socket's mode: 0700 locally, where the client is
	// its user or root; 0777 in a container, whose clients are another
	// user (inside the run's private directory).
	SocketMode string
	where      where
	binds      []string
	name       string
}

// Local says that it runs as a local process.
func (a At) Local() bool { return a.where == local }

// Bind is the addresses it listens on, joined by sep (",", or " " for a
// configuration that lists them so): 127.0.0.1, and ::1 where this host
// has it (then it gets the tcp6 path). In compose.yaml it is compose's
// variable DBSOCK_BIND (comma-separated) or DBSOCK_BIND_SPACED.
func (a At) Bind(sep string) string {
	if a.where != composeFile {
		return strings.Join(a.binds, sep)
	}
	if sep == " " {
		return "${DBSOCK_BIND_SPACED:-127.0.0.1}"
	}
	return "${DBSOCK_BIND:-127.0.0.1}"
}

// Binds is the addresses it listens on, one argument each. In
// compose.yaml it is one word, compose's variable DBSOCK_BIND_SPACED, which
// the shell splits: for an instance started by a shell (Stdin or Files).
func (a At) Binds() []string {
	if a.where == composeFile {
		return []string{a.Bind(" ")}
	}
	return a.binds
}

// IPv6 says that it may listen on ::1 (always in compose.yaml, where
// DBSOCK_BIND says).
func (a At) IPv6() bool {
	return a.where == composeFile || strings.Contains(a.Bind(","), ":")
}

// File is the path of its file name (one of Files).
func (a At) File(name string) string {
	if a.where == local {
		return filepath.Join(a.Dir, name)
	}
	return "/tmp/" + name
}

// Secret is the path, in its container, of the file that holds the
// secret name (one of Secrets); "" locally.
func (a At) Secret(name string) string {
	switch a.where {
	case container:
		return "/sock/" + name
	case composeFile:
		return "/run/secrets/" + name
	}
	return ""
}

// dollar is a literal $ in its command line: $$ in compose.yaml, where $
// starts one of compose's variables.
func (a At) dollar() string {
	if a.where == composeFile {
		return "$$"
	}
	return "$"
}

// forInstance is a as in's arguments see it: no TLS for an instance
// that does not serve TCP.
func (a At) forInstance(in Instance) At {
	if !in.Serves.tcp() {
		a.TLSPort, a.TLS = "", TLSFiles{}
	}
	return a
}

// Recipe is how the providers start the server d describes: locally from
// its instances (or d.Local), and its container from d.Container's image
// with d's command (Spec).
func (d *Description) Recipe() Recipe {
	c := d.Container
	c.Spec, c.Described = d.Spec, d
	r := Recipe{Local: d.Local, Container: &c}
	if r.Local == nil {
		r.Local = d.startLocal
	}
	return r
}

// Spec is the container of d for sf: its command line, environment and
// secrets (the run's password in the first, random ones in the others),
// serving TLS when sf gives the run's certificate and d serves it.
func (d *Description) Spec(sf SpecFor) (ContainerSpec, error) {
	pw, err := RandomPassword()
	if err != nil {
		return ContainerSpec{}, err
	}
	secrets := map[string]string{}
	for i, name := range d.Secrets {
		secrets[name] = pw
		if i > 0 || d.Container.Rotate != nil {
			if secrets[name], err = RandomPassword(); err != nil {
				return ContainerSpec{}, err
			}
		}
	}
	port := strconv.Itoa(sf.Port)
	a := At{where: container, Port: port, Dir: "/sock", Sock: "/sock/" + d.Socket(port), SocketMode: "0777", binds: strings.Split(sf.Bind, ","), name: d.Name}
	tlsPort := 0
	if sf.TLS.Cert != "" && d.TLS != NoTLS && d.NoContainerTLS == nil {
		tlsPort = sf.Port
		if d.TLS == TLSApart {
			tlsPort = sf.TLSPort
		}
		a.TLS, a.TLSPort = sf.TLS, strconv.Itoa(tlsPort)
		if d.KeyOwner != "" {
			a.TLS.Key = d.KeyCopy
		}
	}
	cmd := d.command(a)
	if a.TLSPort != "" && d.KeyOwner != "" {
		cmd = PrivateKeyCmd(sf.TLS, d.KeyOwner, d.KeyCopy, cmd)
	}
	var env map[string]string
	if d.Env != nil {
		env = d.Env(a)
	}
	return ContainerSpec{Cmd: cmd, Env: env, Secrets: secrets, Socket: d.Socket(port), User: d.User, Password: pw, Database: d.Database,
		TLSPort: tlsPort, NoTLS: d.NoContainerTLS, Ready: d.Ready}, nil
}

// A Service is a described server's service in compose.yaml, its values
// compose's variables.
type Service struct {
	Name, Image string
	Command     []string
	Env         map[string]string
	Secrets     []string
	// Socket is its socket's path in the container (its healthcheck
	// waits for it).
	Socket string
	Note   string
}

// ComposeService is d's service in compose.yaml.
func (d *Description) ComposeService() Service {
	upper := strings.ToUpper(d.Name)
	port := fmt.Sprintf("${DBSOCK_%s_PORT:-%d}", upper, d.Port)
	a := At{where: composeFile, Port: port, Dir: "/sock", Sock: "/sock/" + d.Socket(port), SocketMode: "0777", name: d.Name}
	s := Service{Name: d.Name, Image: fmt.Sprintf("${DBSOCK_%s_IMAGE:-%s}", upper, d.Container.Image), Command: d.command(a),
		Secrets: d.Secrets, Socket: a.Sock, Note: d.Note}
	if d.Env != nil {
		s.Env = d.Env(a)
	}
	return s
}

// command is d's command line in a container at a: its binary and
// arguments as they are when it is one instance with nothing to write
// first, else a shell that writes its Files from its first secret, starts
// each instance but the last in the background and becomes the last
// (exec: a stop's SIGTERM reaches it), which reads Stdin from a
// here-document.
func (d *Description) command(a At) []string {
	if len(d.Instances) == 1 && len(d.Files) == 0 && d.Stdin == "" {
		return append([]string{d.Binary}, d.Instances[0].Args(a.forInstance(d.Instances[0]))...)
	}
	secret := ""
	if len(d.Secrets) > 0 {
		secret = `"` + a.dollar() + "(cat " + a.Secret(d.Secrets[0]) + `)"`
	}
	var lines []string
	for _, f := range d.Files {
		format := strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(f.Format)
		lines = append(lines, "printf "+shellQuote(format)+" "+secret+" > "+a.File(f.Name))
	}
	prog := []string{d.Binary}
	if d.Entrypoint {
		prog = []string{"docker-entrypoint.sh", d.Binary}
	}
	for i, in := range d.Instances {
		line := shellJoin(append(prog, in.Args(a.forInstance(in))...))
		if i < len(d.Instances)-1 {
			lines = append(lines, line+" &")
			continue
		}
		line = "exec " + line
		if d.Stdin != "" {
			body := strings.NewReplacer(`\`, `\\`, "$", `\`+a.dollar(), "`", "\\`").Replace(d.Stdin)
			body = strings.ReplaceAll(body, "%s", strings.Trim(secret, `"`))
			if !strings.HasSuffix(body, "\n") {
				body += "\n"
			}
			line += " <<EOF\n" + body + "EOF"
		}
		lines = append(lines, line)
	}
	return []string{"sh", "-c", strings.Join(lines, "\n")}
}

// shellJoin is args as one line of sh.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, s := range args {
		q[i] = shellQuote(s)
	}
	return strings.Join(q, " ")
}

// shellQuote is s as one word of sh: as it is when it is plain (a
// compose variable, ${...}, is left for compose to fill in, and a list
// in one for the shell to split), else in single quotes.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:,=@%+-{}$", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FixedSocket is a Description's Socket that does not depend on the
// port.
func FixedSocket(name string) func(string) string {
	return func(string) string { return name }
}
