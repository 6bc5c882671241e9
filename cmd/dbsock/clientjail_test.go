package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
)

// TestClientContainerPrivileges: the client container holds nothing of
// the host's but its network and the socket directories: whoever runs
// dbsock (here root), its processes run as a user that owns nothing, with
// no capability (CapEff, CapPrm and the bounding set empty: not
// CAP_NET_RAW, which in the host's network namespace would read loopback
// traffic, nor CAP_KILL), no new privileges and a read-only root
// filesystem, in a PID namespace of their own: pid 1 is the container's
// own dbsock agent --wait, and a process of the host is not there to
// signal. A probe, bind-mounted as a socket directory would be, reads it
// all from inside.
func TestClientContainerPrivileges(t *testing.T) {
	needImages(t)
	dir := shortTempDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe")
	build := exec.Command("go", "build", "-o", probe, "./testdata/probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	ctx := context.Background()
	cc, err := supply.StartClient(ctx, supply.ClientOptions{Binary: staticDbsock(t), Dirs: []string{dir}, Target: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Stop(context.Background()) })
	id := strings.Fields(cc.Place())[2] // "docker container ID from image ..."
	out, err := exec.Command("docker", "exec", id, probe, strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		t.Fatalf("docker exec %s %s: %v\n%s", id, probe, err, out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the probe said %q: %v", out, err)
	}
	uid := strconv.Itoa(os.Getuid())
	if os.Getuid() == 0 {
		uid = "65534" // nobody: the directory is open to every user
	}
	for k, want := range map[string]string{
		"uid": uid, "CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000",
		"CapAmb": "0000000000000000", "NoNewPrivs": "1", "pid 1": "/dbsock agent --wait",
		"kill -0 host": syscall.ESRCH.Error(), "write /": "open /probe-was-here: read-only file system",
	} {
		if got[k] != want {
			t.Errorf("in the client container, %s is %q, want %q (all: %v)", k, got[k], want, got)
		}
	}
	// pid 1 is the container's own first process: kill -0 reaches it (the
	// same user), and nothing of the host.
	if got["kill -0 1"] != "ok" {
		t.Errorf("kill -0 1 in the client container: %s, want its own first process reached", got["kill -0 1"])
	}
	for _, want := range []string{"its own PID namespace", "no capabilities", "no new privileges", "read-only root filesystem", "as uid:gid " + uid} {
		if !strings.Contains(cc.Place(), want) {
			t.Errorf("the report's place of the client, %q, does not say %q", cc.Place(), want)
		}
	}
}

// TestContainersGoWithAKilledRun: dbsock killed outright (SIGKILL) while
// it measures from its client container leaves nothing on the engine: its
// reaper removes the server and client containers, its temp dir, and
// ends, within ReapWithin. Killed with its reaper, the client container
// still ends by itself (its first process reads the stdin dbsock held),
// and dbsock clean removes the server's container, which has no such
// stdin.
func TestContainersGoWithAKilledRun(t *testing.T) {
	needImages(t)
	bin := staticDbsock(t)
	tmp := shortTempDir(t)
	args := []string{"run", "redis", "--provider", "docker", "--client", "container", "--client-binary", bin,
		"--image", "redis=" + offlineImage["redis"], "--n", "100000000", "--instances", "1", "--rounds", "1"}
	for _, withReaper := range []bool{true, false} {
		cmd, sc := startDbsock(t, bin, tmp, args...)
		pid := cmd.Process.Pid
		t.Cleanup(func() { removeLabelled(pid) })
		waitForLine(sc, "in the client container, pid")
		if len(labelled(t, pid)) < 2 {
			t.Fatalf("the run (pid %d) has not both its server and client containers: %v", pid, labelled(t, pid))
		}
		client := containerOf(t, pid, "client:redis")
		if !withReaper {
			killReapers(pid)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if withReaper {
			gone := waitFor(supply.ReapWithin, func() bool { return len(labelled(t, pid)) == 0 && len(reapers(pid)) == 0 })
			if !gone {
				t.Errorf("%s after dbsock was killed: left %v, reapers %v", supply.ReapWithin, labelled(t, pid), reapers(pid))
			}
			if left := testutil.TempDirs(t, tmp); len(left) != 0 {
				t.Errorf("temp dirs left by the killed run: %v", left)
			}
			continue
		}
		if !waitFor(30*time.Second, func() bool { return !running(client) }) {
			t.Errorf("the client container %s still runs 30s after its dbsock was killed", client)
		}
		if code, stdout, stderr := dbsock(t, "clean"); code != 0 || !strings.Contains(stdout, "removed container") {
			t.Errorf("clean after a run killed with its reaper: exit %d, %s%s", code, stdout, stderr)
		}
		if left := labelled(t, pid); len(left) != 0 {
			t.Errorf("left after dbsock clean: %v", left)
		}
	}
}

// reapers lists the reapers that watch the dbsock of pid (argv:
// dbsock-reaper PID OWNER SOCKET).
func reapers(pid int) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if args := strings.Split(string(b), "\x00"); err == nil && len(args) > 1 && args[0] == supply.ReaperName && args[1] == strconv.Itoa(pid) {
			if n, err := strconv.Atoi(filepath.Base(p)); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// killReapers kills the reapers of the dbsock of pid, as a kill of
// everything would (what dbsock clean is for).
func killReapers(pid int) {
	for _, r := range reapers(pid) {
		_ = syscall.Kill(r, syscall.SIGKILL)
	}
}

// containerOf is the ID of the container the dbsock of pid labelled as
// target's.
func containerOf(t *testing.T, pid int, target string) string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(pid),
		"--filter", "label="+supply.Label+".target="+target).Output()
	if ids := strings.Fields(string(out)); err == nil && len(ids) == 1 {
		return ids[0]
	}
	t.Fatalf("no one container of pid %d for %s: %q (%v)", pid, target, out, err)
	return ""
}

// running says whether container id runs.
func running(id string) bool {
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", id).Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// waitFor polls cond until it holds or d has passed, and says whether it
// held.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(200 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
