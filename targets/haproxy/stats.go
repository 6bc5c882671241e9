package haproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// HAProxy's own view of each connection is read from its stats socket:
// "show sess all" lists every session with the client's source, the
// frontend and listener it came in on, the backend and server it went out
// to with HAProxy's own address on that leg, and each side's transport
// (ctrl=tcpv4 or unix_stream).

// session is one of HAProxy's sessions as "show sess all" shows it.
type session struct {
	source      string // the client: 127.0.0.1:PORT, or unix:N
	frontend    string
	listener    string // the listener's address: 127.0.0.1:PORT, or unix:N
	backend     string
	backendAddr string // HAProxy's own address on the server's leg ("unix" on a socket)
	server      string
	serverAddr  string // the server's address ("unix" for a socket)
	clientCtrl  string // co0's ctrl: tcpv4, tcpv6 or unix_stream
	serverCtrl  string // co1's ctrl
}

// clientLeg and serverLeg are the transports of the session's two legs as
// HAProxy names them ("" when it does not say).
func (s session) clientLeg() drivers.Transport { return legOfCtrl(s.clientCtrl) }
func (s session) serverLeg() drivers.Transport { return legOfCtrl(s.serverCtrl) }

func legOfCtrl(ctrl string) drivers.Transport {
	switch {
	case ctrl == "unix_stream":
		return drivers.Unix
	case ctrl == "tcpv4":
		return drivers.TCP
	case ctrl == "tcpv6":
		return drivers.TCP6
	}
	return ""
}

// String is the session in HAProxy's words, for evidence.
func (s session) String() string {
	return fmt.Sprintf("source=%s frontend=%s (listener addr=%s, ctrl=%s) backend=%s addr=%s server=%s addr=%s (ctrl=%s)",
		s.source, s.frontend, s.listener, s.clientCtrl, s.backend, s.backendAddr, s.server, s.serverAddr, s.serverCtrl)
}

// maxStats bounds what dbsock reads of one answer of the stats socket.
const maxStats = 8 << 20

// ask sends cmd to HAProxy's stats socket at path and returns its answer.
func ask(ctx context.Context, path, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return "", fmt.Errorf("connect to HAProxy's stats socket %s to ask %q: %w", path, cmd, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", fmt.Errorf("HAProxy's stats socket %s: send %q: %w", path, cmd, err)
	}
	b, err := io.ReadAll(io.LimitReader(c, maxStats+1))
	if err != nil {
		return "", fmt.Errorf("HAProxy's stats socket %s: read the answer to %q: %w", path, cmd, err)
	}
	if len(b) > maxStats {
		return "", fmt.Errorf("HAProxy's stats socket %s: the answer to %q is over %d bytes", path, cmd, maxStats)
	}
	return string(b), nil
}

// sessions reads "show sess all" from the stats socket at path.
func sessions(ctx context.Context, path string) ([]session, error) {
	out, err := ask(ctx, path, "show sess all")
	if err != nil {
		return nil, err
	}
	return parseSessions(out), nil
}

// parseSessions reads the sessions of "show sess all": each begins with
// a line "0x...: [date] id=N proto=... source=..." and goes on indented.
func parseSessions(out string) []session {
	var all []session
	var s *session
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(line, "0x") && strings.Contains(line, ": [") {
			all = append(all, session{source: field(t, "source=")})
			s = &all[len(all)-1]
			continue
		}
		if s == nil {
			continue
		}
		switch {
		case strings.HasPrefix(t, "frontend="):
			s.frontend, s.listener = word(t, "frontend="), addrAfter(t, "listener=")
		case strings.HasPrefix(t, "backend="):
			s.backend, s.backendAddr = word(t, "backend="), addrAfter(t, "backend=")
		case strings.HasPrefix(t, "server="):
			s.server, s.serverAddr = word(t, "server="), addrAfter(t, "server=")
		case strings.HasPrefix(t, "co0="):
			s.clientCtrl = field(t, "ctrl=")
		case strings.HasPrefix(t, "co1="):
			s.serverCtrl = field(t, "ctrl=")
		}
	}
	return all
}

// field is the value of key (e.g. "ctrl=") in line, up to a space.
func field(line, key string) string {
	i := strings.Index(line, key)
	if i < 0 || (i > 0 && line[i-1] != ' ') {
		return ""
	}
	v, _, _ := strings.Cut(line[i+len(key):], " ")
	return v
}

// word is the first word after key at the start of line.
func word(line, key string) string {
	v, _, _ := strings.Cut(strings.TrimPrefix(line, key), " ")
	return v
}

// addrAfter is the "addr=" that follows key in line ("" when none).
func addrAfter(line, key string) string {
	i := strings.Index(line, key)
	if i < 0 {
		return ""
	}
	return field(line[i:], "addr=")
}

// version reads HAProxy's version from "show info".
func version(ctx context.Context, path string) (string, error) {
	out, err := ask(ctx, path, "show info")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Version: "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("HAProxy's stats socket %s: show info names no Version", path)
}
