package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
)

// nobody is the ordinary user the non-root tests run dbsock as: no account
// needs creating, and it owns nothing on this machine.
const nobody = 65534

// dockerUser is an ordinary user in the docker group, as most people run
// Docker: nobody, with the docker group as its one supplementary group, a
// home and a TMPDIR of its own, and dbsock where it may run it.
type dockerUser struct {
	cred      *syscall.Credential
	home, tmp string
	bin       string
}

// newDockerUser makes that user's directories and copies the static dbsock
// (which the client container runs too) into its home. It needs root
// (to become another user); the test is skipped without it.
func newDockerUser(t *testing.T) *dockerUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs dbsock as another user (nobody in the docker group): needs root")
	}
	gid := groupID(t, "docker")
	home, err := os.MkdirTemp("/tmp", "nr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	u := &dockerUser{cred: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{gid}},
		home: home, tmp: filepath.Join(home, "t"), bin: filepath.Join(home, "dbsock")}
	if err := os.Mkdir(u.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(staticDbsock(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{home, u.tmp, u.bin} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return u
}

// groupID is the gid of group name in /etc/group; the test is skipped
// where there is no such group.
func groupID(t *testing.T, name string) uint32 {
	t.Helper()
	f, err := os.Open("/etc/group")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 3 && fields[0] == name {
			gid, err := strconv.ParseUint(fields[2], 10, 32)
			if err != nil {
				t.Fatalf("/etc/group: %s: %v", name, err)
			}
			return uint32(gid)
		}
	}
	t.Skipf("no %s group in /etc/group", name)
	return 0
}

// run runs dbsock as the user with args and returns its exit status, its
// pid and what it wrote to stderr; whatever it left labelled with its pid
// is removed when the test ends (after the test has looked).
func (u *dockerUser) run(t *testing.T, args ...string) (code, pid int, stderr string) {
	t.Helper()
	cmd := exec.Command(u.bin, args...)
	cmd.Dir = u.home
	cmd.Env = append(userEnv(), "HOME="+u.home, "TMPDIR="+u.tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	var errb strings.Builder
	cmd.Stderr = &errb
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid
	t.Cleanup(func() { removeLabelled(pid) })
	err := cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), pid, errb.String()
}

// userEnv is this environment without what belongs to root's session
// (its home, its temp dir) or to dbsock's settings.
func userEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" || name == "TMPDIR" || name == "DOCKER_CONFIG" || strings.HasPrefix(name, "DBSOCK_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// labelled lists the containers and networks labelled with the dbsock of
// pid.
func labelled(t *testing.T, pid int) []string {
	t.Helper()
	var found []string
	for _, kind := range [][]string{{"ps", "-aq"}, {"network", "ls", "-q"}} {
		out, err := exec.Command("docker", append(kind, "--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(pid))...).Output()
		if err != nil {
			t.Fatalf("docker %s: %v", kind[0], err)
		}
		for _, id := range strings.Fields(string(out)) {
			found = append(found, kind[0]+" "+id)
		}
	}
	return found
}

// removeLabelled removes the containers and networks of the dbsock of pid
// (after a failed test).
func removeLabelled(pid int) {
	filter := "label=" + supply.PIDLabel + "=" + strconv.Itoa(pid)
	if out, _ := exec.Command("docker", "ps", "-aq", "--filter", filter).Output(); len(strings.Fields(string(out))) > 0 {
		_ = exec.Command("docker", append([]string{"rm", "-f"}, strings.Fields(string(out))...)...).Run()
	}
	if out, _ := exec.Command("docker", "network", "ls", "-q", "--filter", filter).Output(); len(strings.Fields(string(out))) > 0 {
		_ = exec.Command("docker", append([]string{"network", "rm"}, strings.Fields(string(out))...)...).Run()
	}
}

// TestContainersAsADockerGroupUser runs dbsock as an ordinary user in the
// docker group, not root: the docker and compose providers, with the
// client on the host and in dbsock's client container (dbsock's own
// agent there, at rest and at load), over tcp, the published port and
// the bridge network from the host, and the socket; the tls path of
// every server that serves it, over two server instances. Every path of every
// target is verified on the server side, by the peer its route gives
// (checkRoutes), and nothing is left: no container, no network,
// no temp dir. Each target is checked once (docker, client on the
// host); the other provider and client places, the same for every
// target, with Redis (as TestContainerPaths does as root).
func TestContainersAsADockerGroupUser(t *testing.T) {
	needImages(t)
	u := newDockerUser(t)
	for _, c := range []struct {
		provider, client, paths string
		targets                 []string
		instances               int
		extra                   []string
	}{
		{"docker", "host", "tcp,published,bridge,tls,unix", []string{"redis", "postgres", "mysql"}, 1, nil},
		{"docker", "host", "tcp,tls,unix", []string{"memcached", "pgbouncer"}, 1, nil},
		{"compose", "host", "tcp,published,bridge,unix", []string{"redis"}, 1, nil},
		{"docker", "container", "tcp,tls,unix", []string{"redis", "postgres"}, 2, nil},
		{"compose", "container", "tcp,unix", []string{"redis"}, 1, nil},
		{"docker", "container", "tcp,unix", []string{"redis"}, 1, []string{"--concurrency", "4", "--rate", "1000", "--blocks", "1"}},
	} {
		t.Run(c.provider+"/client="+c.client+"/"+c.paths+"/"+strings.Join(c.targets, ",")+strings.Join(c.extra, ""), func(t *testing.T) {
			out := filepath.Join(u.home, "r.json")
			args := append(append([]string{"run"}, c.targets...), "--provider", c.provider, "--client", c.client,
				"--paths", c.paths, "--n", "100", "--warmup", "10", "--instances", strconv.Itoa(c.instances), "--rounds", "1",
				"--format", "json", "--out", out)
			args = append(args, c.extra...)
			code, pid, stderr := u.run(t, append(args, offlineImages...)...)
			if code != 0 {
				t.Fatalf("exit %d as uid %d in the docker group:\n%s", code, nobody, stderr)
			}
			rep, err := readReport(out)
			if err != nil {
				t.Fatal(err)
			}
			paths := len(strings.Split(c.paths, ","))
			checkRoutes(t, rep, paths*c.instances)
			for _, r := range rep.Runs {
				if r.N != 100 {
					t.Errorf("%s %s: n %d %s", r.Target, r.Transport, r.N, r.Error)
				}
				// The server's CPU time is read (its /proc files are
				// everyone's); its read/write calls (/proc/PID/io) are not
				// this user's to read: left out, never a zero.
				if cpu := r.CPU; cpu == nil || cpu.ServerNs == nil || *cpu.ServerNs <= 0 || (cpu.ServerSyscalls != nil && *cpu.ServerSyscalls == 0) {
					t.Errorf("%s %s: server CPU %s ns, read/write calls %s: want the server's time, and its calls counted or left out", r.Target, r.Transport, deref(cpu, func(c *results.CPU) *int64 { return c.ServerNs }), deref(cpu, func(c *results.CPU) *int64 { return c.ServerSyscalls }))
				}
			}
			for _, ti := range rep.Targets {
				if ti.Error != "" {
					t.Errorf("%s: error %q", ti.Name, ti.Error)
				}
				// The client container runs as this user.
				as := "as uid:gid 65534:65534"
				if c.client == "container" && (!strings.Contains(ti.Client, "docker container") || !strings.Contains(ti.Client, as)) {
					t.Errorf("%s: the client ran in %q, not in its container %s", ti.Name, ti.Client, as)
				}
			}
			if len(rep.Targets) != len(c.targets) {
				t.Errorf("%d targets in the report, want %d", len(rep.Targets), len(c.targets))
			}
			if left := labelled(t, pid); len(left) != 0 {
				t.Errorf("left by the run: %v", left)
			}
			if left := testutil.TempDirs(t, u.tmp); len(left) != 0 {
				t.Errorf("temp dirs left: %v", left)
			}
			os.Remove(out)
		})
	}
}

// TestServicePathRefusedWithoutPrivilege: a user who may not enter other
// containers' network namespaces (nobody in the docker group) is refused
// the service and pod paths from the host client before anything starts,
// exit 2 and one line saying what to do; nothing was started.
func TestServicePathRefusedWithoutPrivilege(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dbsock; skipped with -short")
	}
	u := newDockerUser(t)
	for _, paths := range []string{"tcp,service,unix", "tcp,pod,unix"} {
		code, pid, stderr := u.run(t, "run", "redis", "--provider", "docker", "--paths", paths)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "CAP_SYS_ADMIN and CAP_SYS_PTRACE") ||
			!strings.Contains(stderr, "run as root") {
			t.Errorf("--paths %s as uid %d: exit %d, stderr %q: want exit %d and one line saying what to do", paths, nobody, code, stderr, ExitUsage)
		}
		if left := labelled(t, pid); len(left) != 0 {
			t.Errorf("--paths %s: started %v", paths, left)
		}
	}
}

// deref is a count of cpu's in words: "none" when it is absent.
func deref(cpu *results.CPU, field func(*results.CPU) *int64) string {
	if cpu == nil || field(cpu) == nil {
		return "none"
	}
	return strconv.FormatInt(*field(cpu), 10)
}
