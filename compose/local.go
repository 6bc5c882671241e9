package compose

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/compose/child"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
)

// maxTempBase is the longest temp dir base that leaves room for
// "/dbsock-NNNNNNNNNN/compose-NNNNNNNNNN/mongo/mongodb-NNNNN.sock" in sun_path.
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

// serverDir makes a fresh directory for one server under the provider's
// 0700 temp dir, which lives in /tmp so that socket paths stay short.
func (l *Local) serverDir(target string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.root == "" {
		// Socket paths must fit in 107 bytes: a long $TMPDIR (macOS has
		// one) gives way to /tmp.
		base := os.TempDir()
		if len(base) > maxTempBase {
			base = "/tmp"
		}
		root, err := os.MkdirTemp(base, "dbsock-")
		if err != nil {
			return "", fmt.Errorf("create a temp dir for local servers in %s: %w; set TMPDIR to an existing directory this user may write (TMPDIR is %q)", base, err, os.Getenv("TMPDIR"))
		}
		// The owner's pid lets "dbsock clean" tell a live run from the
		// leftovers of one that was killed.
		if err := os.WriteFile(filepath.Join(root, OwnerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
			os.RemoveAll(root)
			return "", fmt.Errorf("create a temp dir for local servers in %s: %w", base, err)
		}
		l.root = root
	}
	return os.MkdirTemp(l.root, target+"-")
}

// searchPath is $PATH for messages, or a word saying it is empty.
func searchPath() string {
	if p := os.Getenv("PATH"); p != "" {
		return "PATH=" + p
	}
	return "PATH is empty"
}

func (l *Local) lookPath(names ...string) (string, string) {
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

func lookPathSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"} {
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
	return t.Local(ctx, l, t.Name)
}

// localServer holds what every local server has in common.
type localServer struct {
	dir   string
	port  int
	sock  string
	cpus  []int
	runAs *syscall.Credential // nil: as dbsock's own user
	proc  *process
}

func (l *Local) prepare(target, sockName string) (*localServer, error) {
	dir, err := l.serverDir(target)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	sock := filepath.Join(dir, sockName)
	if len(sock) > drivers.MaxSocketPath {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("socket path %s is longer than %d bytes; set TMPDIR to a shorter directory", sock, drivers.MaxSocketPath)
	}
	return &localServer{dir: dir, port: port, sock: sock, cpus: l.ServerCPUs}, nil
}

func (ls *localServer) tcpAddr() string { return "127.0.0.1:" + strconv.Itoa(ls.port) }

// start runs the server and waits until both endpoints accept.
func (ls *localServer) start(ctx context.Context, name, bin string, args, env []string, stdin string) error {
	bin, args, err := placement.Command(ls.cpus, bin, args)
	if err != nil {
		return err
	}
	p, err := startProcess(ls.dir, name, bin, args, env, stdin, ls.runAs)
	if err != nil {
		return err
	}
	ls.proc = p
	return p.waitReady(ctx, ReadyTimeout, dialBoth(ls.tcpAddr(), ls.sock))
}

// server wraps up a started server; stop ends the process and removes its dir.
func (ls *localServer) server(target, origin string, tcp, unix drivers.Endpoint) *Server {
	pid := ls.proc.cmd.Process.Pid
	return &Server{Target: target, Provider: "local", TCP: tcp, Unix: unix, Origin: origin, PID: pid, stop: ls.stop,
		CPU: cpustat.NewTree(pid, "local process tree")}
}

func (ls *localServer) stop(context.Context) error {
	var err error
	if ls.proc != nil {
		err = ls.proc.stop(10 * time.Second)
	}
	return errors.Join(err, os.RemoveAll(ls.dir))
}

// fail stops what was started and returns err.
func (ls *localServer) fail(err error) error {
	return errors.Join(err, ls.stop(context.Background()))
}

func randomPassword() (string, error) {
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
	ls, err := l.prepare(target, kind+".sock")
	if err != nil {
		return nil, err
	}
	env := []string{child.Env + "=" + child.Spec(kind, ls.tcpAddr(), ls.sock)}
	if err := ls.start(ctx, kind+" server", bin, nil, env, ""); err != nil {
		return nil, ls.fail(err)
	}
	origin := fmt.Sprintf("local child process %s (pid %d)", filepath.Base(bin), ls.proc.cmd.Process.Pid)
	return ls.server(target, origin,
		drivers.Endpoint{Transport: drivers.TCP, Address: ls.tcpAddr()},
		drivers.Endpoint{Transport: drivers.Unix, Address: ls.sock}), nil
}

func localRedis(ctx context.Context, l *Local, name string) (*Server, error) {
	_, bin := l.lookPath("redis-server")
	if bin == "" {
		return nil, fmt.Errorf("%w %s: local provider: redis-server was not found on PATH (%s) (apt-get install redis-server, or run scripts/install-deps.sh)", ErrCannotSupply, name, searchPath())
	}
	ls, err := l.prepare(name, "redis.sock")
	if err != nil {
		return nil, err
	}
	password, err := randomPassword()
	if err != nil {
		return nil, ls.fail(err)
	}
	// The configuration, password included, goes through stdin ("-") so that
	// it never shows in the process listing.
	conf := strings.Join([]string{
		"port " + strconv.Itoa(ls.port),
		"bind 127.0.0.1",
		"unixsocket " + ls.sock,
		"unixsocketperm 700",
		`save ""`,
		"appendonly no",
		"dir " + ls.dir,
		"daemonize no",
		"requirepass " + password,
		"",
	}, "\n")
	if err := ls.start(ctx, "redis-server", bin, []string{"-"}, nil, conf); err != nil {
		return nil, ls.fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, ls.proc.cmd.Process.Pid)
	return ls.server(name, origin,
		drivers.Endpoint{Transport: drivers.TCP, Address: ls.tcpAddr(), Password: password},
		drivers.Endpoint{Transport: drivers.Unix, Address: ls.sock, Password: password}), nil
}

func localMongo(ctx context.Context, l *Local, name string) (*Server, error) {
	prog, bin := l.lookPath("mongod", "ferretdb")
	if bin == "" {
		return nil, fmt.Errorf("%w %s: local provider: neither mongod nor ferretdb was found on PATH (%s) (scripts/install-deps.sh builds FerretDB)", ErrCannotSupply, name, searchPath())
	}
	ls, err := l.prepare(prog, "")
	if err != nil {
		return nil, err
	}
	var args []string
	if prog == "mongod" {
		ls.sock = filepath.Join(ls.dir, "mongodb-"+strconv.Itoa(ls.port)+".sock")
		args = []string{"--dbpath", ls.dir, "--port", strconv.Itoa(ls.port), "--bind_ip", "127.0.0.1",
			"--unixSocketPrefix", ls.dir, "--filePermissions", "0700", "--quiet"}
	} else {
		ls.sock = filepath.Join(ls.dir, "ferretdb.sock")
		args = []string{"--handler=sqlite", "--sqlite-url=file:" + ls.dir + "/", "--state-dir=" + ls.dir,
			"--listen-addr=" + ls.tcpAddr(), "--listen-unix=" + ls.sock, "--telemetry=disable",
			"--log-level=warn", "--debug-addr=-"}
	}
	if err := ls.start(ctx, prog, bin, args, nil, ""); err != nil {
		return nil, ls.fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, ls.proc.cmd.Process.Pid)
	return ls.server(prog, origin,
		drivers.Endpoint{Transport: drivers.TCP, Address: ls.tcpAddr()},
		drivers.Endpoint{Transport: drivers.Unix, Address: ls.sock}), nil
}
