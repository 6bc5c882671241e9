package supply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/internal/cpustat"
)

// process is a server child process whose output goes to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
}

// startProcess starts bin with args in its own process group, output to
// dir/name.log, stdin from stdin (so that secrets never appear in the
// process listing). The child is killed if dbsock dies.
//
// runAs, when set, starts the process as another user (for a server that
// refuses to run as root).
func startProcess(dir, name, bin string, args []string, env []string, stdin string, runAs *syscall.Credential) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: create log file: %w", name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = ServerEnv(env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.SysProcAttr = procAttr(runAs)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w%s", name, bin, err, ClosedTo(err, dir, runAs))
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail returns the last lines of the process's log, for error messages.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	return Tail(string(b), 8)
}

// stop ends the server: SIGCONT first (a stopped server cannot act on
// SIGTERM), then sig (SIGTERM when 0), then after grace SIGKILL, each to the process
// group and to every descendant found before (a server's backend
// processes may run in sessions of their own, out of the group's reach); descendants left
// once the server has gone are killed.
func (p *process) stop(sig syscall.Signal, grace time.Duration) error {
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	if p.exited() {
		return nil
	}
	pgid := p.cmd.Process.Pid
	tree, _ := cpustat.Descendants(pgid)
	signal := func(sig syscall.Signal) {
		_ = syscall.Kill(-pgid, sig)
		for _, pid := range tree {
			_ = syscall.Kill(pid, sig)
		}
	}
	defer func() { // what the server left behind
		for _, pid := range tree[min(1, len(tree)):] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	signal(syscall.SIGCONT)
	signal(sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	signal(syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("stop %s (pid %d): still running after SIGKILL", p.name, pgid)
	}
}

// waitReady probes until probe succeeds, the process exits, or the deadline
// passes.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	gone := func() error {
		if p.exited() {
			return fmt.Errorf("%s exited before it was ready (%v); its log %s says:\n%s", p.name, p.waitErr, p.logPath, p.logTail())
		}
		return nil
	}
	err := poll(ctx, timeout, localPollMax, probe, gone)
	var late *NotReady
	if errors.As(err, &late) {
		return fmt.Errorf("%s was not ready after %s (last probe: %v); its log says:\n%s", p.name, timeout, late.Last, p.logTail())
	}
	return err
}

// NotReady is Poll's error when the time ran out; Last is the last probe's.
type NotReady struct{ Last error }

func (e *NotReady) Error() string { return fmt.Sprintf("not ready (last probe: %v)", e.Last) }

// Poll runs probe until it succeeds, gone reports that the server died, ctx
// ends, or timeout passes (then it returns a *NotReady). It backs off from
// 2 ms to 250 ms between probes; nothing waits a fixed time.
func Poll(ctx context.Context, timeout time.Duration, probe func(context.Context) error, gone func() error) error {
	return poll(ctx, timeout, 250*time.Millisecond, probe, gone)
}

// localPollMax is the longest wait between two readiness probes of a local
// server process. Its probe is a dial over loopback or a login, and its
// gone check reads a channel; with Poll's 250 ms the wait after a server
// was ready was up to a quarter of a second on each of a run's restarts
// (a server ready in about 150 ms was found ready after 254 ms, one
// ready in about 1.05 s after 1.25 s).
const localPollMax = 10 * time.Millisecond

// poll is Poll backing off up to maxDelay.
func poll(ctx context.Context, timeout, maxDelay time.Duration, probe func(context.Context) error, gone func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := min(2*time.Millisecond, maxDelay)
	for {
		if err := gone(); err != nil {
			return err
		}
		last := probe(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return &NotReady{Last: last}
			}
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, maxDelay)
	}
}

// ReadyProbe is the probe of a container server: both endpoints accept, and
// ready (a login, where needed) succeeds.
func ReadyProbe(srv *Server, ready func(context.Context, *Server) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := dialBoth(srv.TCP().Address, srv.Unix().Address)(ctx); err != nil {
			return err
		}
		if ready != nil {
			return ready(ctx, srv)
		}
		return nil
	}
}

// dialBoth is a readiness probe: both the TCP port and the socket accept.
func dialBoth(tcpAddr, unixPath string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		for _, a := range [][2]string{{"tcp", tcpAddr}, {"unix", unixPath}} {
			c, err := d.DialContext(ctx, a[0], a[1])
			if err != nil {
				return err
			}
			c.Close()
		}
		return nil
	}
}

// FreePort4 is a free port on 127.0.0.1 for a server dbsock starts,
// below the kernel's range of ephemeral ports where it can: a port from
// that range (what listening on port 0 gives) may be handed to a client
// connection's local end while the server is down between two instances,
// and the restarted server's bind then fails ("Address already in use").
// Where the range leaves too little room below it (or cannot be read), the
// kernel's choice.
func FreePort4() (int, error) {
	if low, ok := ephemeralLow(); ok && low > minServerPort+1000 {
		for range 50 {
			port := minServerPort + rand.IntN(low-minServerPort)
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// minServerPort is the lowest port FreePort4 chooses: above the ports
// services are registered on most.
const minServerPort = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range), and whether it was read.
func ephemeralLow() (int, bool) {
	f, err := os.Open("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	return low, err == nil
}

// VersionOutput runs "bin --version" and returns its first line.
func VersionOutput(bin string) string {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return ""
	}
	line, _, _ := bytes.Cut(out, []byte("\n"))
	return string(line)
}

// Tail returns the last n lines of s, for error messages.
//
// A server's last lines are often boilerplate after the one that says
// what went wrong (a "No space left on device" may be followed by a dozen
// lines of shutdown): lines that name an error, earlier than the
// tail, come first, up to n of them.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	tail := lines[len(lines)-n:]
	var errs []string
	for _, l := range lines[:len(lines)-n] {
		if len(errs) < n && errorLine(l) {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		return strings.Join(tail, "\n")
	}
	return strings.Join(errs, "\n") + "\n...\n" + strings.Join(tail, "\n")
}

// errorLine says whether a log line reports an error.
func errorLine(l string) bool {
	u := strings.ToUpper(l)
	for _, w := range []string{"ERROR", "FATAL", "PANIC", "NO SPACE LEFT", "PERMISSION DENIED", "CANNOT ", "CAN'T ", "FAILED"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// SystemUser looks up a user to run a server as (servers that refuse to
// run as root run as their own user).
func SystemUser(name, why string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%s must not run as root and there is no %q user to run it as: %w", why, name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// ClosedTo explains err, a failure to start a program as runAs in dir,
// when it is that runAs may not enter a directory on the way there (a
// 0700 TMPDIR under a server that runs as its own user): ": that user cannot enter DIR ...", else "".
func ClosedTo(err error, dir string, runAs *syscall.Credential) string {
	if runAs == nil || !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	closed := unreachableBy(dir, runAs.Uid, runAs.Gid)
	if closed == "" {
		return ""
	}
	return fmt.Sprintf(": uid %d, as which it runs, cannot enter %s; set TMPDIR to a directory every user can enter, such as /tmp", runAs.Uid, closed)
}

// ClosedDir is an error when runAs (a server's own user) cannot enter dir
// because a directory on the way is closed to it (a 0700 TMPDIR), saying
// which and what to do; nil when it can.
func ClosedDir(dir, server string, runAs *syscall.Credential) error {
	if runAs == nil {
		return nil
	}
	if closed := unreachableBy(dir, runAs.Uid, runAs.Gid); closed != "" {
		return fmt.Errorf("%s runs as uid %d, which cannot enter %s; set TMPDIR to a directory every user can enter, such as /tmp", server, runAs.Uid, closed)
	}
	return nil
}

// unreachableBy returns the first directory from / down to dir that user
// uid (group gid) may not enter, or "" when it may enter them all.
func unreachableBy(dir string, uid, gid uint32) string {
	var path string
	for _, part := range strings.Split(filepath.Clean(dir), string(filepath.Separator)) {
		path = filepath.Join(path, part)
		if path == "" {
			path = string(filepath.Separator)
		}
		if !filepath.IsAbs(path) {
			path = string(filepath.Separator) + path
		}
		fi, err := os.Stat(path)
		if err != nil {
			return ""
		}
		mode := fi.Mode().Perm()
		owner, group := ownerOf(fi)
		switch {
		case owner == uid:
			if mode&0o100 == 0 {
				return path
			}
		case group == gid:
			if mode&0o010 == 0 {
				return path
			}
		case mode&0o001 == 0:
			return path
		}
	}
	return ""
}

// ownerOf is fi's owner and group (max values when the OS does not say).
func ownerOf(fi fs.FileInfo) (uid, gid uint32) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, st.Gid
	}
	return ^uint32(0), ^uint32(0)
}

// RunsAs is the user process pid runs as ("uid 999"), as /proc says; ""
// where there is no /proc (macOS) or the process is gone.
func RunsAs(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil || pid <= 0 {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Uid:" {
			return "uid " + f[1]
		}
	}
	return ""
}
