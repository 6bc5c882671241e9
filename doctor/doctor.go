// Package doctor looks at this machine the way dbsock's users need to: which
// database sockets exist, whether this user may connect to them, what
// answers there, how clients read "localhost" for each, and whether Docker
// can serve dbsock's container providers.
package doctor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// Kind is what doctor knows of one database's sockets: each target
// registers its own (targets.Doctor).
type Kind = targets.Doctor

// Socket is what doctor found at one socket path.
type Socket struct {
	Path     string
	Kind     *Kind
	Found    string // "well-known path" or "listening (/proc/net/unix)"
	Mode     string
	Owner    string
	Connects bool
	Problem  string // why this user cannot connect
	Answer   string // product and version, or why unknown
}

// Options tune what doctor probes.
type Options struct {
	// Kinds are the databases doctor recognises.
	Kinds []Kind
	// Extra are more socket paths to look at.
	Extra []string
	// Timeout bounds each probe.
	Timeout time.Duration
}

// FindSockets lists candidate database sockets: well-known paths that exist
// and listening Unix sockets whose names look like a database's.
func FindSockets(kinds []Kind, extra []string) []Socket {
	seen := map[string]bool{}
	var out []Socket
	add := func(path, found string, any bool) {
		k := kindOf(kinds, path)
		if seen[path] || (k == nil && !any) {
			return
		}
		seen[path] = true
		out = append(out, Socket{Path: path, Kind: k, Found: found})
	}
	for _, p := range extra {
		add(p, "given", true)
	}
	for _, k := range kinds {
		for _, p := range k.WellKnown {
			if _, err := os.Lstat(p); err == nil || errors.Is(err, os.ErrPermission) {
				add(p, "well-known path", false)
			}
		}
	}
	for _, p := range listening() {
		add(p, "listening (/proc/net/unix)", false)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].kindName() < out[j].kindName() })
	return out
}

// kindOf guesses a socket's database from its file name.
func kindOf(kinds []Kind, path string) *Kind {
	base := strings.ToLower(filepath.Base(path))
	for i := range kinds {
		if kinds[i].Match != nil && kinds[i].Match(base) {
			return &kinds[i]
		}
	}
	return nil
}

func (s *Socket) kindName() string {
	if s.Kind == nil {
		return "unknown"
	}
	return s.Kind.Name
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
		s.Problem = drivers.Explain(err, drivers.SocketAt(s.Path)).Error()
		return
	}
	s.Connects = true
	_ = c.SetDeadline(time.Now().Add(timeout))
	defer c.Close()
	if s.Kind == nil || s.Kind.Answer == nil {
		s.Answer = "unknown: the file name does not say which database this is"
		return
	}
	s.Answer = s.Kind.Answer(ctx, c, s.Path)
}

// Report probes everything and writes it for people.
func Report(ctx context.Context, w io.Writer, o Options) error {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "dbsock doctor, as uid %d\n\nDatabase sockets\n", os.Geteuid())
	socks := FindSockets(o.Kinds, o.Extra)
	if len(socks) == 0 {
		b.WriteString("  none found at the usual paths or among listening sockets; give one with --socket PATH\n")
	}
	for i := range socks {
		s := &socks[i]
		Probe(ctx, s, o.Timeout)
		kind := s.kindName()
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
		if s.Kind != nil && s.Kind.Localhost != "" {
			fmt.Fprintf(b, "    localhost: %s\n", s.Kind.Localhost)
		}
	}
	d := supply.ProbeEngine(ctx, o.Timeout)
	b.WriteString("\nDocker\n")
	if !d.Reachable {
		fmt.Fprintf(b, "  engine: not reachable at %s: %s\n", d.Socket, d.Problem)
	} else {
		fmt.Fprintf(b, "  engine:          %s, version %s, %s\n", d.Socket, d.Version, d.OS)
		fmt.Fprintf(b, "  rootless:        %s\n  Docker Desktop:  %s\n", yes(d.Rootless), yes(d.Desktop))
		b.WriteString("  " + d.Networking() + "\n")
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
