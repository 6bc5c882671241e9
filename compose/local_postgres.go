package compose

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
	pgdrv "github.com/dbsock/dbsock/drivers/postgres"
)

// PostgresUser and PostgresDatabase are the role and database dbsock uses
// in the PostgreSQL servers it starts.
const (
	PostgresUser     = "dbsock"
	PostgresDatabase = "postgres"
)

// postgresBin finds a PostgreSQL server binary: on PATH, else in Debian's
// versioned /usr/lib/postgresql/N/bin (newest first).
func (l *Local) postgresBin(name string) string {
	if _, p := l.lookPath(name); p != "" {
		return p
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode()&0o111 != 0 {
			return filepath.Join(d, name)
		}
	}
	return ""
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func localPostgres(ctx context.Context, l *Local, name string) (*Server, error) {
	initdb, server := l.postgresBin("initdb"), l.postgresBin("postgres")
	if initdb == "" || server == "" {
		return nil, fmt.Errorf("%w %s: local provider: PostgreSQL's initdb and postgres were not found in /usr/lib/postgresql/*/bin or on PATH (%s) (apt-get install postgresql, or run scripts/install-deps.sh)", ErrCannotSupply, name, searchPath())
	}
	ls, err := l.prepare(name, "")
	if err != nil {
		return nil, err
	}
	ls.sock = pgdrv.SocketFile(ls.dir, ls.port)
	if len(ls.sock) > drivers.MaxSocketPath {
		return nil, ls.fail(fmt.Errorf("socket path %s is longer than %d bytes; set TMPDIR to a shorter directory", ls.sock, drivers.MaxSocketPath))
	}
	// PostgreSQL will not run as root: then it runs as the postgres user,
	// which gets its own server dir, and the run dir lets it pass (0711:
	// enter, not list).
	if os.Geteuid() == 0 {
		cred, err := systemUser("postgres")
		if err != nil {
			return nil, ls.fail(err)
		}
		ls.runAs = cred
		if err := os.Chown(ls.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, ls.fail(err)
		}
		if err := os.Chmod(filepath.Dir(ls.dir), 0o711); err != nil {
			return nil, ls.fail(err)
		}
	}
	password, err := randomPassword()
	if err != nil {
		return nil, ls.fail(err)
	}
	pwfile := filepath.Join(ls.dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return nil, ls.fail(err)
	}
	if ls.runAs != nil {
		if err := os.Chown(pwfile, int(ls.runAs.Uid), int(ls.runAs.Gid)); err != nil {
			return nil, ls.fail(err)
		}
	}
	data := filepath.Join(ls.dir, "data")
	cmd := exec.CommandContext(ctx, initdb, "-D", data, "-U", PostgresUser, "--pwfile="+pwfile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.Dir = ls.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: ls.runAs}
	out, err := cmd.CombinedOutput()
	os.Remove(pwfile)
	if err != nil && ctx.Err() != nil {
		return nil, ls.fail(fmt.Errorf("interrupted while initdb initialised the data dir: %w", ctx.Err()))
	}
	if err != nil {
		return nil, ls.fail(fmt.Errorf("initialize PostgreSQL data dir %s with %s: %w\n%s", data, initdb, err, tail(string(out), 8)))
	}
	args := []string{"-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "port=" + strconv.Itoa(ls.port),
		"-c", "unix_socket_directories=" + ls.dir, "-c", "unix_socket_permissions=0700", "-c", "max_connections=300",
		"-c", "shared_buffers=32MB", "-c", "fsync=off"}
	if err := ls.start(ctx, "postgres", server, args, nil, ""); err != nil {
		return nil, ls.fail(err)
	}
	tcp := drivers.Endpoint{Transport: drivers.TCP, Address: ls.tcpAddr(), User: PostgresUser, Password: password, Database: PostgresDatabase}
	unix := tcp
	unix.Transport, unix.Address = drivers.Unix, ls.sock
	// Accepting connections is not yet ready: PostgreSQL refuses logins
	// while it starts up.
	login := func(ctx context.Context) error { _, err := pgdrv.New(0).Info(ctx, tcp); return err }
	gone := func() error {
		if ls.proc.exited() {
			return fmt.Errorf("postgres exited before it was ready; its log ends with:\n%s", ls.proc.logTail())
		}
		return nil
	}
	if err := poll(ctx, 30*time.Second, login, gone); err != nil {
		return nil, ls.fail(err)
	}
	origin := fmt.Sprintf("local process %s (pid %d)", server, ls.proc.cmd.Process.Pid)
	return ls.server(name, origin, tcp, unix), nil
}

// systemUser looks up a user to run a server as.
func systemUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL must not run as root and there is no %q user to run it as: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
