package drivers

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/internal/setting"
)

// Explain adds to a failed connection's error what most likely went wrong
// and what to do, for the errors people hit most with loopback TCP and Unix
// sockets: nothing listening, a missing socket file, and permissions.
func Explain(err error, ep Endpoint) error { return explain(err, ep, false) }

// ExplainFirst is Explain for a client's first contact with a server,
// where a connection closed at once means a server of another kind (or
// none), not one that went away.
func ExplainFirst(err error, ep Endpoint) error { return explain(err, ep, true) }

func explain(err error, ep Endpoint, first bool) error {
	if err == nil {
		return nil
	}
	hint := ""
	route := ep.Transport.Route().Info() // a control is diagnosed as the path it repeats
	unix, tcp := route.Network == "unix", route.Network == "tcp" && route.Host != ""
	switch {
	case route.TLS && !tlsHint(err, ep).IsZero():
		return setting.Err("%w; %s", err, tlsHint(err, ep)) // it may name a setting
	case unix && NotASocket(ep.Address) != "":
		hint = NotASocket(ep.Address)
	case errors.Is(err, syscall.ECONNREFUSED) && tcp:
		hint = fmt.Sprintf("nothing accepts connections on %s: is the server running and listening on that address and port?", ep.Address)
	case errors.Is(err, syscall.ECONNREFUSED) && unix:
		hint = fmt.Sprintf("the socket file %s exists but no server accepts on it: the server is down or left a stale socket behind", ep.Address)
	case errors.Is(err, syscall.ENOENT) && unix:
		hint = missingSocket(ep.Address)
	case errors.Is(err, syscall.EACCES) && unix:
		hint = SocketPermissions(ep.Address)
	case WentAway(err) && first:
		hint = "the server hung up on the client's first words: is it really a server of this kind?"
	case WentAway(err):
		hint = "the server closed the connection or went away (it stopped, crashed, or dropped this client): check that it still runs and what its log says"
	}
	if hint == "" {
		return err
	}
	return setting.Err("%w; %s", err, hint)
}

// NotASocket says what path is when it exists but is not a Unix socket (a
// directory, a regular file, a FIFO, a device); "" when it is a socket or
// does not exist.
func NotASocket(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket != 0 {
		return ""
	}
	what := "a regular file"
	switch m := fi.Mode(); {
	case m.IsDir():
		return fmt.Sprintf("%s is a directory, not a socket: give the socket file inside it%s", path, socketsIn(path))
	case m&os.ModeNamedPipe != 0:
		what = "a FIFO (named pipe)"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a block device"
	}
	return fmt.Sprintf("%s is %s, not a Unix socket: check the server's socket setting and give the socket file it creates", path, what)
}

// socketsIn names, as " (for example PATH)", the first Unix socket among
// the first entries of dir; "" when it has none.
func socketsIn(dir string) string {
	f, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer f.Close()
	entries, _ := f.ReadDir(100)
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			return " (for example " + filepath.Join(dir, e.Name()) + ")"
		}
	}
	return ""
}

// WentAway reports whether err is a connection that the other side closed
// or reset: what a client sees when its server stops mid-run.
func WentAway(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	// Some clients flatten the cause into text.
	msg := err.Error()
	for _, s := range []string{"connection reset by peer", "broken pipe", "conn closed", "bad state: EOF", "unexpected EOF", "connection is already closed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func missingSocket(path string) string {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Sprintf("the directory %s does not exist: check the socket path, and whether the server runs where this process can see its files (a socket inside a Docker Desktop VM is not reachable from the host)", dir)
	}
	return fmt.Sprintf("no socket file %s: the server is not running, or its socket setting names another path", path)
}

// SocketPermissions explains why this process may not connect to the Unix
// socket at path: which permission is missing where, and how to fix it.
func SocketPermissions(path string) string {
	uid, gid := os.Geteuid(), os.Getegid()
	groups, _ := os.Getgroups()
	who := fmt.Sprintf("you are uid %d (%s), gid %d, groups %s", uid, userName(uid), gid, formatGroups(groups))
	// Every parent directory needs search (x) permission.
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && !may(fi, uid, gid, groups, 1) {
			return fmt.Sprintf("%s; the directory %s (mode %s, %s) denies you search (x) permission, so nothing inside it can be reached: "+
				"ask for the directory to be opened to your group, or run dbsock as a user who may enter it", who, dir, fi.Mode(), owner(fi))
		}
		if dir == "/" || dir == "." {
			break
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return who
	}
	if !may(fi, uid, gid, groups, 2) {
		fix := "have the server create it with group or world write permission" + socketModes()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().Perm()&0o020 != 0 {
			fix = fmt.Sprintf("join its group (usermod -aG %s %s, then log in again)", groupName(int(st.Gid)), userName(uid))
		}
		return fmt.Sprintf("%s; the socket %s (mode %s, %s) denies you write (w) permission, which connecting needs: %s", who, path, fi.Mode(), owner(fi), fix)
	}
	return who
}

// may reports whether the caller has permission bit (1 x, 2 w, 4 r) on fi.
func may(fi os.FileInfo, uid, gid int, groups []int, bit os.FileMode) bool {
	if uid == 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	if int(st.Uid) == uid {
		return perm&(bit<<6) != 0
	}
	inGroup := int(st.Gid) == gid
	for _, g := range groups {
		inGroup = inGroup || g == int(st.Gid)
	}
	if inGroup {
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}

func owner(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "owner unknown"
	}
	return fmt.Sprintf("owner %s, group %s", userName(int(st.Uid)), groupName(int(st.Gid)))
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func groupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return strconv.Itoa(gid)
}

func formatGroups(groups []int) string {
	if len(groups) == 0 {
		return "none"
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = groupName(g)
	}
	return strings.Join(names, ",")
}

// TimedOut says whether err is a timeout: a context's deadline, or a
// network deadline (a client library's own on its socket, as gomemcache
// sets one).
func TimedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
