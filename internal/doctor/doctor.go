// Package doctor looks at this machine the way dbsock's users need to: which
// database sockets exist, whether this user may connect to them, what
// answers there, how clients read "localhost" for each, and whether Docker
// can serve dbsock's container providers.
package doctor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/drivers/mongo"
)

// Kind is the database family a socket belongs to.
type Kind string

// Kinds doctor recognises.
const (
	MySQL    Kind = "MySQL/MariaDB"
	Redis    Kind = "Redis"
	MongoDB  Kind = "MongoDB"
	Postgres Kind = "PostgreSQL"
)

// WellKnown are the places packages and images put database sockets.
var WellKnown = []string{
	"/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/var/lib/mysql/mysql.sock", "/tmp/mysql.sock",
	"/run/redis/redis-server.sock", "/var/run/redis/redis-server.sock", "/var/run/redis/redis.sock", "/tmp/redis.sock",
	"/tmp/mongodb-27017.sock",
	"/run/postgresql/.s.PGSQL.5432", "/var/run/postgresql/.s.PGSQL.5432", "/tmp/.s.PGSQL.5432",
}

// KindOf guesses a socket's database from its file name.
func KindOf(path string) (Kind, bool) {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasPrefix(base, ".s.pgsql."):
		return Postgres, true
	case strings.Contains(base, "mysql"), strings.Contains(base, "mariadb"):
		return MySQL, true
	case strings.Contains(base, "redis"), strings.Contains(base, "valkey"):
		return Redis, true
	case strings.Contains(base, "mongo"), strings.Contains(base, "ferretdb"):
		return MongoDB, true
	}
	return "", false
}

// Localhost says how common clients read "localhost" for kind.
func Localhost(k Kind) string {
	switch k {
	case MySQL:
		return "the MySQL client library (mysql CLI, libmysqlclient, PHP, Python mysqlclient) takes host localhost to mean its default socket; 127.0.0.1 means TCP. The Go driver never does: localhost is TCP, the socket is unix(PATH)."
	case Redis:
		return "clients use TCP (localhost:6379) unless given this path: redis-cli -s PATH, go-redis Network \"unix\"."
	case MongoDB:
		return "clients use TCP unless the host is this path, percent-encoded: mongodb://" + "%2Ftmp%2Fmongodb-27017.sock; the Go driver needs it to end in \"sock\"."
	case Postgres:
		return "libpq and pgx use this socket's directory when no host is given or the host is a directory; host localhost means TCP."
	}
	return ""
}

// Socket is what doctor found at one socket path.
type Socket struct {
	Path     string
	Kind     Kind
	Found    string // "well-known path" or "listening (/proc/net/unix)"
	Mode     string
	Owner    string
	Connects bool
	Problem  string // why this user cannot connect
	Answer   string // product and version, or why unknown
}

// Options tune what doctor probes.
type Options struct {
	// Extra are more socket paths to look at.
	Extra []string
	// Timeout bounds each probe.
	Timeout time.Duration
}

// FindSockets lists candidate database sockets: well-known paths that exist
// and listening Unix sockets whose names look like a database's.
func FindSockets(extra []string) []Socket {
	seen := map[string]bool{}
	var out []Socket
	add := func(path, found string, any bool) {
		k, ok := KindOf(path)
		if seen[path] || (!ok && !any) {
			return
		}
		seen[path] = true
		out = append(out, Socket{Path: path, Kind: k, Found: found})
	}
	for _, p := range extra {
		add(p, "given", true)
	}
	for _, p := range WellKnown {
		if _, err := os.Lstat(p); err == nil || errors.Is(err, os.ErrPermission) {
			add(p, "well-known path", false)
		}
	}
	for _, p := range listening() {
		add(p, "listening (/proc/net/unix)", false)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// listening returns the paths of listening Unix sockets from /proc/net/unix.
func listening() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// Num RefCount Protocol Flags Type St Inode Path; flags 00010000 is
		// __SO_ACCEPTCON: a listening socket.
		if len(fields) >= 8 && fields[3] == "00010000" && strings.HasPrefix(fields[7], "/") {
			out = append(out, fields[7])
		}
	}
	return out
}

// Probe fills in what this user can do with s.
func Probe(ctx context.Context, s *Socket, timeout time.Duration) {
	if fi, err := os.Stat(s.Path); err == nil {
		s.Mode = fi.Mode().String()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s.Owner = fmt.Sprintf("uid %d gid %d", st.Uid, st.Gid)
		}
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", s.Path)
	if err != nil {
		s.Problem = drivers.Explain(err, drivers.Endpoint{Transport: drivers.Unix, Address: s.Path}).Error()
		return
	}
	s.Connects = true
	_ = c.SetDeadline(time.Now().Add(timeout))
	defer c.Close()
	switch s.Kind {
	case MySQL:
		s.Answer = mysqlGreeting(c)
	case Redis:
		s.Answer = redisInfo(c)
	case MongoDB:
		c.Close()
		info, err := mongo.New("", 0).Info(ctx, drivers.Endpoint{Transport: drivers.Unix, Address: s.Path})
		if err != nil {
			s.Answer = "no answer to buildInfo: " + err.Error()
		} else {
			s.Answer = info.String()
			if info.Detail != "" {
				s.Answer += " (" + info.Detail + ")"
			}
		}
	case Postgres:
		s.Answer = "PostgreSQL (its version needs a login)"
	default:
		s.Answer = "unknown: the file name does not say which database this is"
	}
}

// mysqlGreeting reads the handshake a MySQL-protocol server sends first:
// it names the server version without any credentials.
func mysqlGreeting(c net.Conn) string {
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
	version, _, _ := strings.Cut(string(body[1:]), "\x00")
	version = strings.TrimPrefix(version, "5.5.5-") // MariaDB's prefix for old clients
	product := "MySQL"
	if strings.Contains(strings.ToLower(version), "mariadb") {
		product = "MariaDB"
	}
	return product + " " + version
}

// redisInfo asks INFO server without credentials.
func redisInfo(c net.Conn) string {
	if _, err := io.WriteString(c, "INFO server\r\n"); err != nil {
		return "no answer: " + err.Error()
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "no answer: " + err.Error()
	}
	if strings.HasPrefix(line, "-") {
		if strings.Contains(line, "NOAUTH") {
			return "Redis (asks for a password before it says more)"
		}
		return "Redis error: " + strings.TrimSpace(line[1:])
	}
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return "Redis (version not read)"
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			return "Redis " + v
		}
	}
}

// Docker describes the Docker engine as dbsock's container providers see it.
type Docker struct {
	Socket      string
	Reachable   bool
	Problem     string
	Version     string
	OS          string
	Rootless    bool
	Desktop     bool
	HostNetwork bool
}

// ProbeDocker asks the engine at $DOCKER_HOST (unix://) or
// /var/run/docker.sock for /info.
func ProbeDocker(ctx context.Context, timeout time.Duration) Docker {
	d := Docker{Socket: "/var/run/docker.sock"}
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		d.Socket = strings.TrimPrefix(h, "unix://")
	} else if h != "" {
		d.Problem = "DOCKER_HOST is " + h + ": doctor only probes unix:// engines"
		return d
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", d.Socket)
		}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/info", nil)
	resp, err := client.Do(req)
	if err != nil {
		d.Problem = drivers.Explain(unwrapURL(err), drivers.Endpoint{Transport: drivers.Unix, Address: d.Socket}).Error()
		return d
	}
	defer resp.Body.Close()
	var info struct {
		ServerVersion   string
		OperatingSystem string
		OSType          string
		SecurityOptions []string
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		d.Problem = "the engine's /info did not decode: " + err.Error()
		return d
	}
	d.Reachable = true
	d.Version, d.OS = info.ServerVersion, info.OperatingSystem
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "rootless") {
			d.Rootless = true
		}
	}
	d.Desktop = strings.Contains(info.OperatingSystem, "Docker Desktop")
	d.HostNetwork = info.OSType == "linux" && !d.Rootless && !d.Desktop
	return d
}

func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Report probes everything and writes it for people.
func Report(ctx context.Context, w io.Writer, o Options) error {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "dbsock doctor, as uid %d\n\nDatabase sockets\n", os.Geteuid())
	socks := FindSockets(o.Extra)
	if len(socks) == 0 {
		b.WriteString("  none found at the usual paths or among listening sockets; give one with --socket PATH\n")
	}
	for i := range socks {
		s := &socks[i]
		Probe(ctx, s, o.Timeout)
		kind := string(s.Kind)
		if kind == "" {
			kind = "unknown"
		}
		fmt.Fprintf(b, "\n  %s  %s  (%s)\n", kind, s.Path, s.Found)
		if s.Mode != "" {
			fmt.Fprintf(b, "    file:      %s, %s\n", s.Mode, s.Owner)
		}
		if s.Connects {
			b.WriteString("    connect:   yes\n")
			fmt.Fprintf(b, "    answers:   %s\n", s.Answer)
		} else {
			fmt.Fprintf(b, "    connect:   no: %s\n", s.Problem)
		}
		if l := Localhost(s.Kind); l != "" {
			fmt.Fprintf(b, "    localhost: %s\n", l)
		}
	}
	d := ProbeDocker(ctx, o.Timeout)
	b.WriteString("\nDocker\n")
	if !d.Reachable {
		fmt.Fprintf(b, "  engine: not reachable at %s: %s\n", d.Socket, d.Problem)
	} else {
		fmt.Fprintf(b, "  engine:          %s, version %s, %s\n", d.Socket, d.Version, d.OS)
		fmt.Fprintf(b, "  rootless:        %s\n  Docker Desktop:  %s\n", yes(d.Rootless), yes(d.Desktop))
		if d.HostNetwork {
			b.WriteString("  host networking: possible: a container server can listen on this host's 127.0.0.1, so TCP takes the same loopback path as a native server\n")
		} else {
			b.WriteString("  host networking: not possible here: TCP to a container would cross Docker's port proxy, and a socket in a bind mount may not be reachable\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func yes(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}
