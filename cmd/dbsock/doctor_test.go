package main

import (
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestDoctorListsLocalServers starts real servers and checks that doctor
// finds each socket among the listening ones, connects, and names the
// product that answers.
func TestDoctorListsLocalServers(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "mongod", "ferretdb")
	testutil.NeedAny(t, "initdb")
	mysql, redis, mongo, pg := startLocal(t, "mysql"), startLocal(t, "redis"), startLocal(t, "mongo"), startLocal(t, "postgres")
	// A socket named like PostgreSQL's whose server never answers.
	silent := filepath.Join(shortTempDir(t), ".s.PGSQL.5432")
	l, err := net.Listen("unix", silent)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	code, out, stderr := dbsock(t, "doctor", "--socket", silent, "--timeout", "1s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []struct{ path, answer string }{
		{mysql.Unix().Address, "MariaDB 10."},
		{redis.Unix().Address, "Redis (asks for a password"},
		{mongo.Unix().Address, "FerretDB v1."},
		{pg.Unix().Address, "PostgreSQL protocol (it answered the SSLRequest"},
		{silent, "no answer to PostgreSQL's SSLRequest"},
	} {
		i := strings.Index(out, want.path)
		if i < 0 {
			t.Errorf("doctor did not list %s:\n%s", want.path, out)
			continue
		}
		section := out[i:]
		if j := strings.Index(section[1:], "\n\n"); j > 0 {
			section = section[:j+1]
		}
		if !strings.Contains(section, "connect:   yes") || !strings.Contains(section, want.answer) || (!strings.Contains(section, "localhost:") && want.path != silent) {
			t.Errorf("section for %s lacks connect/answer %q/localhost:\n%s", want.path, want.answer, section)
		}
	}
	if !strings.Contains(out, "Docker\n") {
		t.Errorf("no Docker section:\n%s", out)
	}
}

// unprivileged returns the uid and gid of a system user for permission
// tests, creating it when needed (root only).
func unprivileged(t *testing.T) (uint32, uint32) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a command as another user")
	}
	const name = "dbsock-test"
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uint32(uid), uint32(gid)
}

// openPath makes every directory from / down to dir searchable by others.
func openPath(t *testing.T, dir string) {
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o055); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSocketPermissionDiagnosis connects as an unprivileged user to a real
// MariaDB socket inside a root-only directory: TCP works, the socket does
// not, and dbsock says which directory denies what, to whom, and how to fix
// it, without printing the password.
func TestSocketPermissionDiagnosis(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	uid, gid := unprivileged(t)
	bin := buildDbsock(t)
	openPath(t, filepath.Dir(bin))
	srv := startLocal(t, "mysql")
	sockDir := filepath.Dir(srv.Unix().Address)

	cmd := exec.Command(bin, "run", "mysql", "--provider", "external", "--n", "10", "--instances", "1", "--rounds", "1", "-q",
		"--mysql-addr", srv.TCP().Address, "--mysql-socket", srv.Unix().Address, "--mysql-user", srv.TCP().User, "--mysql-db", srv.TCP().Database)
	cmd.Env = append(os.Environ(), "DBSOCK_MYSQL_PASSWORD="+srv.TCP().Password)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != ExitFailed {
		t.Fatalf("exit %v, want %d:\n%s", err, ExitFailed, out)
	}
	msg := string(out)
	owner := "root"
	if fi, err := os.Stat(sockDir); err == nil {
		if u, err := user.LookupId(strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))); err == nil {
			owner = u.Username // the server's own user (mysql) when it does not run as root
		}
	}
	for _, want := range []string{"permission denied", "you are uid " + strconv.Itoa(int(uid)), "denies you search (x) permission", "mode drwx------", "owner " + owner} {
		if !strings.Contains(msg, want) {
			t.Errorf("diagnosis lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(msg, filepath.Dir(sockDir)) && !strings.Contains(msg, sockDir) {
		t.Errorf("diagnosis does not name the directory:\n%s", msg)
	}
	if strings.Contains(msg, srv.TCP().Password) {
		t.Fatal("the password was printed")
	}

	// The socket itself: an open directory, but a socket only root may write.
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	openPath(t, dir)
	sock := filepath.Join(dir, "mysql.sock")
	ln, err := netListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(sock, 0o700); err != nil {
		t.Fatal(err)
	}
	doc := exec.Command(bin, "doctor", "--socket", sock)
	doc.Dir = "/"
	doc.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	dout, err := doc.CombinedOutput()
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, dout)
	}
	if !strings.Contains(string(dout), "connect:   no") || !strings.Contains(string(dout), "denies you write (w) permission") {
		t.Errorf("doctor as an unprivileged user on a 0700 socket:\n%s", dout)
	}
}

// TestDockerSocketPermission: a user who may not use the Docker engine's
// socket is told so, and what to do, not that an image could not be
// pulled.
func TestDockerSocketPermission(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the Docker engine; skipped with -short")
	}
	sock := "/var/run/docker.sock"
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm()&0o002 != 0 {
		t.Skip("no Docker engine socket closed to other users here")
	}
	uid, gid := unprivileged(t)
	bin := buildDbsock(t)
	openPath(t, filepath.Dir(bin))
	for _, provider := range []string{"docker", "compose"} {
		cmd := exec.Command(bin, "run", "redis", "--provider", provider, "--n", "10", "--instances", "1", "--rounds", "1", "-q")
		cmd.Dir = "/"
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+sock, "HOME=/tmp")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		out, _ := cmd.CombinedOutput()
		msg := string(out)
		if !strings.Contains(msg, "this user may not use the Docker engine's socket "+sock) || !strings.Contains(msg, "denies you write (w) permission") || strings.Contains(msg, "could not be pulled") {
			t.Errorf("--provider %s as uid %d:\n%s", provider, uid, msg)
		}
	}
}
