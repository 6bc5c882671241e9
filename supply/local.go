package supply

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/supply/child"
)

// maxTempBase is the longest temp dir base that leaves room for
// "/dbsock-NNNNNNNNNN/compose-NNNNNNNNNN/TARGET/SOCKET-NNNNN.sock" in sun_path.
const maxTempBase = 40

// ReadyTimeout bounds how long a local server may take to become ready.
const ReadyTimeout = 60 * time.Second

// Local starts private throwaway servers from binaries installed on this
// machine: each in its own directory under one 0700 temp dir, on a free
// 127.0.0.1 port and a short socket path, stopped and deleted afterwards.
type Local struct {
	// LookPath finds server binaries; nil means exec.LookPath plus the sbin
	// directories a non-root PATH often lacks.
	LookPath func(string) (string, error)
	// EchoBinary is the executable started as the echo server child; empty
	// means this very executable (see package child).
	EchoBinary string
	// ServerCPUs, when set, pins every server started to these CPUs.
	ServerCPUs []int

	mu   sync.Mutex
	root string
	// owner is what its owner file records (zero: Self()).
	owner Owner
	// tmpNote says why the temp dir is not under $TMPDIR ("" when it is).
	tmpNote string
}

// NewLocal returns a local provider.
func NewLocal() *Local { return &Local{} }

// Name implements Provider.
func (*Local) Name() string { return "local" }

// Close implements Provider: it removes the temp dir of all its servers.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.root == "" {
		return nil
	}
	err := os.RemoveAll(l.root)
	l.root = ""
	return err
}

// Root returns the provider's temp dir ("" before the first server).
func (l *Local) Root() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.root
}

// ServerDir makes a fresh directory for one server under the provider's
// 0700 temp dir, which lives in /tmp so that socket paths stay short.
func (l *Local) ServerDir(target string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.root == "" {
		// Socket paths must fit in 107 bytes: a long $TMPDIR (macOS has
		// one) gives way to /tmp.
		base, note := tempBase()
		l.tmpNote = note
		root, err := os.MkdirTemp(base, "dbsock-")
		if err != nil {
			return "", fmt.Errorf("create a temp dir for local servers in %s: %w; set TMPDIR to an existing directory this user may write (TMPDIR is %q)", base, err, os.Getenv("TMPDIR"))
		}
		// The owner's pid lets "dbsock clean" tell a live run from the
		// leftovers of one that was killed.
		owner := l.owner
		if owner.PID == 0 {
			owner = Self()
		}
		if err := os.WriteFile(filepath.Join(root, OwnerFile), []byte(owner.String()+"\n"), 0o600); err != nil {
			os.RemoveAll(root)
			return "", fmt.Errorf("create a temp dir for local servers in %s: %w", base, err)
		}
		l.root = root
	}
	return os.MkdirTemp(l.root, target+"-")
}

// setOwner sets what the owner file of its temp dir records.
func (l *Local) setOwner(o Owner) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.owner = o
}

// tempBase is where the run's temp dir goes: $TMPDIR, or /tmp when that
// is too long for the servers' socket paths (note says so).
func tempBase() (base, note string) {
	base = os.TempDir()
	if len(base) > maxTempBase {
		return "/tmp", fmt.Sprintf("The temp dir %s (TMPDIR) is longer than %d bytes, too long for the servers' socket paths (at most %d bytes): their files and sockets are under /tmp instead.",
			base, maxTempBase, drivers.MaxSocketPath)
	}
	return base, ""
}

// SearchPath is $PATH for messages, or a word saying it is empty.
func SearchPath() string {
	if p := os.Getenv("PATH"); p != "" {
		return "PATH=" + p
	}
	return "PATH is empty"
}

// NotFound is a recipe's error when no binary of its server is here: the
// local provider cannot supply target; what names the binaries looked for
// and install says how to get them.
func NotFound(target, what, install string) error {
	return fmt.Errorf("%w %s: local provider: %s was not found on PATH (%s) or in %s (%s)", ErrCannotSupply, target, what, SearchPath(), strings.Join(systemDirs, ", "), install)
}

// Find returns the first of names found (by LookPath, or on PATH and in
// the sbin directories a non-root PATH often lacks), and its path; two
// empty strings when none is.
func (l *Local) Find(names ...string) (name, path string) {
	look := l.LookPath
	if look == nil {
		look = lookPathSbin
	}
	for _, n := range names {
		if p, err := look(n); err == nil {
			return n, p
		}
	}
	return "", ""
}

// FindIn is Find that also looks in the directories dirGlobs match, the
// highest version first (e.g. /usr/lib/SERVER/*/bin). A LookPath set
// on l (a test's) is the only place looked.
func (l *Local) FindIn(dirGlobs []string, names ...string) (name, path string) {
	if n, p := l.Find(names...); p != "" || l.LookPath != nil {
		return n, p
	}
	for _, g := range dirGlobs {
		dirs, _ := filepath.Glob(g)
		sort.Slice(dirs, func(i, j int) bool { return versionLess(dirs[j], dirs[i]) })
		for _, d := range dirs {
			for _, n := range names {
				p := filepath.Join(d, n)
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return n, p
				}
			}
		}
	}
	return "", ""
}

// versionLess orders paths by the numbers in them (…/9/bin before …/15/bin).
func versionLess(a, b string) bool {
	na, nb := numbers(a), numbers(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

func numbers(s string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// systemDirs are where packages put servers and their tools, looked in
// after PATH (which may lack the sbin directories, or be empty): Debian's
// and Homebrew's (/opt/homebrew on Apple silicon, /usr/local on Intel).
var systemDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
	"/opt/homebrew/bin", "/opt/homebrew/sbin"}

// HomebrewPrefixes are where Homebrew lives: /opt/homebrew on Apple
// silicon, /usr/local on Intel Macs.
var HomebrewPrefixes = []string{"/opt/homebrew", "/usr/local"}

// HomebrewKegs are the directory globs of a Homebrew formula's binaries,
// for FindIn: the formula's own keg, then its versioned ones (keg-only
// formulas, such as a server's FORMULA@16, are not linked onto PATH).
func HomebrewKegs(formula string) []string {
	var out []string
	for _, p := range HomebrewPrefixes {
		out = append(out, filepath.Join(p, "opt", formula, "bin"), filepath.Join(p, "opt", formula+"@*", "bin"))
	}
	return out
}

func lookPathSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range systemDirs {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Supply implements Provider.
func (l *Local) Supply(ctx context.Context, t Target) (*Server, error) {
	if t.Local == nil {
		return nil, fmt.Errorf("%w %s: the local provider has no recipe for it", ErrCannotSupply, t.Name)
	}
	srv, err := t.Local(ctx, l, t.Name)
	l.mu.Lock()
	note := l.tmpNote
	l.mu.Unlock()
	if err == nil && note != "" {
		srv.Warnings = append(srv.Warnings, note)
	}
	return srv, err
}

// LocalServer is one private server a recipe starts: its own directory
// under the provider's temp dir, a free 127.0.0.1 port and a socket path.
// A recipe fills in what its server needs, calls Start, and hands back
// Server; on any error it returns Fail(err), which stops what was started.
type LocalServer struct {
	Dir  string // the server's private directory (removed on stop)
	Port int    // a free TCP port on 127.0.0.1
	Sock string // the socket path (Dir/sockName unless the recipe changes it)
	CPUs []int  // CPUs the server is pinned to (none: unpinned)
	// RunAs, when set, starts the server as another user (for a server
	// that refuses to run as root).
	RunAs *syscall.Credential
	// StopSignal asks the server to stop (SIGTERM when 0): a throwaway
	// server should stop at once, without waiting for its clients
	// (a server whose SIGTERM waits for every session to end may have a
	// signal that does not) or for a timer (a server that acts on
	// SIGTERM only at its next clock tick, and keeps nothing, gets
	// SIGKILL; each target's recipe says which).
	StopSignal syscall.Signal
	// ListenAll says the recipe had its server listen on every one of
	// Loopbacks (Bind: ::1 too, for the tcp6 path); NoLoopbacks, when it
	// cannot, says why (the report says it for each path it misses).
	ListenAll   bool
	NoLoopbacks string
	// tlsAddr is the server's TLS address on 127.0.0.1, once the recipe
	// has configured it (ServeTLS).
	tlsAddr string
	proc    *process
	// start starts the process again as it was last started (Restart).
	start func(context.Context) error
	// handOver are files that hold a password the server reads as it
	// starts (HandOver).
	handOver []handedFile
}

// handedFile is a file of HandOver and what it holds.
type handedFile struct {
	path string
	data []byte
}

// HandOver names files in the server's directory that hold a password
// the server reads only as it starts (an auth file): from now on each is
// removed as soon as the server has read it (or else once it is ready)
// and written back while it restarts, so that a run that ends at once
// (SIGKILL, a second Ctrl-C) leaves no password on disk unless it ends
// while its server reads it.
func (ls *LocalServer) HandOver(paths ...string) error {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("hand %s to the server: %w", p, err)
		}
		ls.handOver = append(ls.handOver, handedFile{path: p, data: b})
	}
	return nil
}

// putBack writes the HandOver files that are not there (0600, the
// server's user's); takeBack removes them.
func (ls *LocalServer) putBack() error {
	for _, f := range ls.handOver {
		if _, err := os.Lstat(f.path); err == nil {
			continue
		}
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return fmt.Errorf("write %s back for the server: %w", f.path, err)
		}
		if err := ls.Own(f.path); err != nil {
			return err
		}
	}
	return nil
}

// watchHandOver removes each HandOver file as soon as the server has read
// it (RemoveOnceRead); what it returns ends the watch.
func (ls *LocalServer) watchHandOver() (stop func()) {
	var paths []string
	for _, f := range ls.handOver {
		paths = append(paths, f.path)
	}
	return RemoveOnceRead(paths)
}

func (ls *LocalServer) takeBack() {
	for _, f := range ls.handOver {
		os.Remove(f.path)
	}
}

// Prepare makes a LocalServer for target with its socket named sockName
// in its directory; the path must fit in sun_path.
func (l *Local) Prepare(target, sockName string) (*LocalServer, error) {
	dir, err := l.ServerDir(target)
	if err != nil {
		return nil, err
	}
	port, err := freePort6()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ls := &LocalServer{Dir: dir, Port: port, Sock: filepath.Join(dir, sockName), CPUs: l.ServerCPUs}
	if err := ls.CheckSocket(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return ls, nil
}

// CheckSocket fails when Sock does not fit in sun_path.
func (ls *LocalServer) CheckSocket() error {
	if len(ls.Sock) > drivers.MaxSocketPath {
		return fmt.Errorf("socket path %s is longer than %d bytes; set TMPDIR to a shorter directory", ls.Sock, drivers.MaxSocketPath)
	}
	return nil
}

// TCPAddr is the server's 127.0.0.1 address.
func (ls *LocalServer) TCPAddr() string { return "127.0.0.1:" + strconv.Itoa(ls.Port) }

// Bind is the loopback addresses the server is to listen on, joined by
// sep in its configuration's syntax: Loopbacks (127.0.0.1, and ::1 where
// this host has it, for the tcp6 path; every Host of the path table).
func (ls *LocalServer) Bind(sep string) string {
	addrs := Loopbacks()
	ls.ListenAll = true
	return strings.Join(addrs, sep)
}

// Start runs bin (pinned to CPUs, output to Dir/name.log, stdin from stdin
// so that secrets stay off the command line) and waits until both
// endpoints accept.
func (ls *LocalServer) Start(ctx context.Context, name, bin string, args, env []string, stdin string) error {
	return ls.StartProbe(ctx, name, bin, args, env, stdin, dialBoth(ls.TCPAddr(), ls.Sock))
}

// StartProbe is Start with its own readiness probe.
func (ls *LocalServer) StartProbe(ctx context.Context, name, bin string, args, env []string, stdin string, ready func(context.Context) error) error {
	bin, args, err := placement.Command(ls.CPUs, bin, args)
	if err != nil {
		return err
	}
	ls.start = func(ctx context.Context) error {
		if err := ls.putBack(); err != nil {
			return err
		}
		defer ls.takeBack()
		defer ls.watchHandOver()()
		p, err := startProcess(ls.Dir, name, bin, args, env, stdin, ls.RunAs)
		if err != nil {
			return err
		}
		ls.proc = p
		return p.waitReady(ctx, ReadyTimeout, ready)
	}
	return ls.start(ctx)
}

// restart stops the process (as Stop does, keeping its directory) and
// starts it again with the same command, input and readiness probe.
func (ls *LocalServer) restart(ctx context.Context) error {
	if err := ls.proc.stop(ls.StopSignal, 10*time.Second); err != nil {
		return err
	}
	// A server that exits before it closes its listener leaves its socket
	// file, and the next one cannot bind there.
	if fi, err := os.Lstat(ls.Sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(ls.Sock)
	}
	if err := ls.start(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", ls.proc.name, err)
	}
	return nil
}

// StopProcess ends the started process as Stop would, keeping its
// directory, so that the recipe can start it again another way: a server
// first started for set-up only (an account made over its private socket,
// no TCP listener yet), then for the run.
func (ls *LocalServer) StopProcess() error {
	if ls.proc == nil {
		return nil
	}
	return ls.proc.stop(ls.StopSignal, 10*time.Second)
}

// PID is the started server's process ID.
func (ls *LocalServer) PID() int { return ls.proc.cmd.Process.Pid }

// Origin says where the server came from, for the report.
func (ls *LocalServer) Origin(bin string) string {
	return fmt.Sprintf("local process %s (pid %d)", bin, ls.PID())
}

// Gone is a readiness poll's check that the server is still running.
func (ls *LocalServer) Gone() error {
	if ls.proc.exited() {
		return fmt.Errorf("%s exited before it was ready; its log says:\n%s", ls.proc.name, ls.proc.logTail())
	}
	return nil
}

// Server wraps up the started server; its Stop ends the process and
// removes its directory.
func (ls *LocalServer) Server(target, origin string, tcp, unix drivers.Endpoint) *Server {
	pid := ls.PID()
	tree := cpustat.NewTree(pid, "local process tree")
	srv := &Server{Target: target, Provenance: drivers.Provenance{Provider: "local", Origin: origin}, PID: pid, stop: ls.stop,
		CPU: tree}
	srv.Set(tcp, unix)
	OfferLoopbacks(context.Background(), srv, ls.ListenAll, ls.NoLoopbacks)
	if ls.tlsAddr != "" {
		tls, _ := TLSEndpoint(tcp, ls.tlsAddr) // ServeTLS made the CA already
		srv.Set(tls)
	}
	srv.restart = func(ctx context.Context) error {
		if err := ls.restart(ctx); err != nil {
			return err
		}
		srv.PID, tree.Root = ls.PID(), ls.PID()
		_ = tree.Refresh() // where it fails, so does the next Read, which says why
		return nil
	}
	return srv
}

func (ls *LocalServer) stop(ctx context.Context) error {
	var err error
	if ls.proc != nil {
		grace := 10 * time.Second // a server's own shutdown, before SIGKILL
		if dl, ok := ctx.Deadline(); ok {
			grace = min(grace, max(time.Until(dl)/2, 0))
		}
		err = ls.proc.stop(ls.StopSignal, grace)
	}
	return errors.Join(err, os.RemoveAll(ls.Dir))
}

// ServeTLS writes the run's server certificate, key and CA into the
// server's directory, owned by the user it runs as, and records that the
// server serves TLS at port on 127.0.0.1 (its TCP port, for servers that
// negotiate TLS on their one port; 0 means that one): Server then gives it
// the tls path. The recipe puts the files into the server's
// configuration.
func (ls *LocalServer) ServeTLS(port int) (TLSFiles, error) {
	uid, gid := -1, -1
	if ls.RunAs != nil {
		uid, gid = int(ls.RunAs.Uid), int(ls.RunAs.Gid)
	}
	files, err := WriteTLSFiles(ls.Dir, "", uid, gid)
	if err != nil {
		return TLSFiles{}, err
	}
	if port == 0 {
		port = ls.Port
	}
	ls.tlsAddr = "127.0.0.1:" + strconv.Itoa(port)
	return files, nil
}

// ServeTLSApart is ServeTLS for a server that serves TLS on a listener of
// its own: at a second free port, which it returns.
func (ls *LocalServer) ServeTLSApart() (TLSFiles, int, error) {
	port, err := freePort6()
	if err != nil {
		return TLSFiles{}, 0, err
	}
	files, err := ls.ServeTLS(port)
	return files, port, err
}

// FreePort is another port free on 127.0.0.1 (and ::1 where this host has
// it), for a server's second listener.
func FreePort() (int, error) { return freePort6() }

// Fail stops what was started and returns err.
func (ls *LocalServer) Fail(err error) error {
	return errors.Join(err, ls.stop(context.Background()))
}

// RandomPassword is a fresh password for a server dbsock starts.
func RandomPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a random password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// childServer starts one of dbsock's own servers (package child) in a child
// process: the echo server, the gRPC health service or the HTTP server.
func (l *Local) childServer(ctx context.Context, target, kind string) (*Server, error) {
	bin := l.EchoBinary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find dbsock's own executable to start the %s server: %w", kind, err)
		}
		bin = exe
	}
	ls, err := l.Prepare(target, kind+".sock")
	if err != nil {
		return nil, err
	}
	tcp6 := ""
	if ls.Bind(",") != "127.0.0.1" {
		tcp6 = "[::1]:" + strconv.Itoa(ls.Port)
	}
	env := []string{child.Env + "=" + child.Spec(kind, ls.TCPAddr(), ls.Sock, tcp6)}
	if err := ls.Start(ctx, kind+" server", bin, nil, env, ""); err != nil {
		return nil, ls.Fail(err)
	}
	origin := fmt.Sprintf("local child process %s (pid %d)", filepath.Base(bin), ls.proc.cmd.Process.Pid)
	tcp, unix := Served(drivers.Endpoint{}, ls.TCPAddr(), ls.Sock)
	return ls.Server(target, origin, tcp, unix), nil
}
