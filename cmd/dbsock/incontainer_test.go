package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
)

// A CI job in a container with the host's Docker engine socket (GitLab's
// and Jenkins' Docker executors): dbsock runs there, its servers in
// containers of the host's engine. The job's image is dbsock/redis, whose
// entrypoint sets umask 0077 as the official images' do.

// jobImage is the job container's image.
const jobImage = "dbsock/redis:7.0"

// startJob starts a job container running script (sh -c) with dbsock at
// /dbsock, the engine's socket, and shared (a host directory) at /shared,
// where TMPDIR points; it returns the container's ID. The container is
// removed when the test ends.
func startJob(t *testing.T, shared, script string) string {
	t.Helper()
	bin := staticDbsock(t)
	out, err := exec.Command("docker", "run", "-d", "--label", "dbsock-test=incontainer",
		"-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", bin+":/dbsock:ro", "-v", shared+":/shared",
		"-e", "TMPDIR=/shared", jobImage, "sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("start the job container: %v", err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	return id
}

// jobContainers lists the containers (running or not) that a dbsock in
// job started: their owner label names job.
func jobContainers(t *testing.T, job string) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=dbsock", "--format", `{{.ID}} {{.Label "dbsock.owner"}}`).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, owner, ok := strings.Cut(line, " "); ok && strings.Contains(owner, "container="+job) {
			ids = append(ids, id)
		}
	}
	return ids
}

// waitForServer waits (at most two minutes) until the dbsock in job has a
// server container running.
func waitForServer(t *testing.T, job string) []string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ids := jobContainers(t, job); len(ids) > 0 {
			return ids
		}
		if out, _ := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", job).Output(); strings.TrimSpace(string(out)) != "true" {
			logs, _ := exec.Command("docker", "logs", "--tail", "20", job).CombinedOutput()
			t.Fatalf("the job ended before its server started:\n%s", logs)
		}
	}
	t.Fatal("the job started no server container in 2 minutes")
	return nil
}

// hostClean runs dbsock clean on the host, with TMPDIR tmp (when set).
func hostClean(t *testing.T, tmp string, args ...string) string {
	t.Helper()
	cmd := exec.Command(staticDbsock(t), append([]string{"clean"}, args...)...)
	if tmp != "" {
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dbsock clean on the host: %v\n%s", err, out)
	}
	return string(out)
}

func runDirs(t *testing.T, shared string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(shared, "dbsock-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func exists(id string) bool { return exec.Command("docker", "inspect", id).Run() == nil }

// TestRunInsideAContainer: dbsock in a job container measures redis over
// both paths and verifies each on the server side; dbsock clean on the
// host meanwhile removes nothing of the run; the run leaves nothing.
func TestRunInsideAContainer(t *testing.T) {
	needImages(t)
	shared := shortTempDir(t)
	// Long enough (seconds) that the clean below runs while it measures.
	job := startJob(t, shared, "/dbsock run redis --provider docker --image redis=dbsock/redis:7.0 --n 150000 --instances 2 --blocks 4 -q --format json --out /shared/report.json")
	servers := waitForServer(t, job)
	dirs := runDirs(t, shared)
	out := hostClean(t, shared) // TMPDIR where the job's temp dir is: clean looks there
	for _, id := range servers {
		if !exists(id) || strings.Contains(out, id[:12]) {
			t.Errorf("dbsock clean on the host touched the live run's container %s:\n%s", id, out)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil || strings.Contains(out, d) {
			t.Errorf("dbsock clean on the host touched the live run's temp dir %s:\n%s", d, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, err := exec.CommandContext(ctx, "docker", "wait", job).Output()
	logs, _ := exec.Command("docker", "logs", "--tail", "30", job).CombinedOutput()
	if err != nil || strings.TrimSpace(string(code)) != "0" {
		t.Fatalf("the run in the job container: exit %s (%v):\n%s", code, err, logs)
	}
	rep, err := readReport(filepath.Join(shared, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	verified := map[drivers.Transport]int{}
	for _, r := range rep.Runs {
		if r.Incomplete || !r.TransportVerified {
			t.Errorf("%s run over %s: incomplete %v, verified %v (%s)", r.Target, r.Transport, r.Incomplete, r.TransportVerified, r.Error)
		}
		verified[r.Transport]++
	}
	if verified[drivers.TCP] == 0 || verified[drivers.Unix] == 0 {
		t.Errorf("runs verified per path: %v, want tcp and unix", verified)
	}
	for _, target := range rep.Targets {
		// The report names the host's socket directory and the network
		// the server shared.
		if !strings.HasPrefix(target.SocketDir, shared+"/dbsock-") || !strings.Contains(target.NetworkMode, "network namespace of dbsock's own container") {
			t.Errorf("%s: socket dir %q, network %q; want the host's %s/dbsock-... and the job's network namespace", target.Name, target.SocketDir, target.NetworkMode, shared)
		}
	}
	if left := jobContainers(t, job); len(left) > 0 {
		t.Errorf("the run left containers %v", left)
	}
	if left := runDirs(t, shared); len(left) > 0 {
		t.Errorf("the run left temp dirs %v", left)
	}
}

// TestCleanAfterARunInsideAContainerIsKilled: while the job runs, dbsock
// clean in another container (another PID namespace, which cannot see the
// job's) leaves the run's containers alone and says so; once dbsock in
// the job is killed with its reaper (the job's container still running),
// dbsock clean on the host (TMPDIR elsewhere) removes its containers and
// its temp dir, which it finds through the containers' socket directories.
func TestCleanAfterARunInsideAContainerIsKilled(t *testing.T) {
	needImages(t)
	shared := shortTempDir(t)
	job := startJob(t, shared, "/dbsock run redis --provider docker --image redis=dbsock/redis:7.0 --n 100000000 --instances 1 -q --out /shared/report.md & echo $! > /shared/pid; wait; sleep 600")
	servers := waitForServer(t, job)
	if len(runDirs(t, shared)) == 0 {
		t.Fatal("the run has no temp dir in the shared directory")
	}
	other, err := exec.Command("docker", "run", "--rm", "--label", "dbsock-test=incontainer", "-v", "/var/run/docker.sock:/var/run/docker.sock",
		"-v", staticDbsock(t)+":/dbsock:ro", "--entrypoint", "/dbsock", jobImage, "clean", "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("dbsock clean --dry-run in another container: %v\n%s", err, other)
	}
	for _, id := range servers {
		if !strings.Contains(string(other), "left alone: container "+id[:12]) {
			t.Errorf("dbsock clean in another container does not say it leaves the live run's container %s alone:\n%s", id[:12], other)
		}
	}
	// dbsock and its reaper (dbsock-reaper PID ...) are killed: what the
	// run leaves is dbsock clean's.
	// kill -9 returns before a process is gone: the clean below must find
	// them dead, so the job waits (10 s at most each) until dbsock and its
	// reapers have exited and been reaped.
	kill := `p=$(cat /shared/pid); for d in /proc/[0-9]*; do set -- $(tr '\0' ' ' <$d/cmdline 2>/dev/null); ` +
		`if [ "$1" = ` + supply.ReaperName + ` ] && [ "$2" = "$p" ]; then kill -9 ${d#/proc/}; r="$r ${d#/proc/}"; fi; done; kill -9 $p; ` +
		`for q in $p $r; do for i in $(seq 100); do [ -d /proc/$q ] || break; sleep 0.1; done; ` +
		`if [ -d /proc/$q ]; then echo "pid $q still there 10 s after kill -9"; exit 1; fi; done`
	if out, err := exec.Command("docker", "exec", job, "sh", "-c", kill).CombinedOutput(); err != nil {
		t.Fatalf("kill dbsock and its reaper in the job: %v\n%s", err, out)
	}
	out := hostClean(t, "")
	for _, id := range servers {
		if exists(id) {
			t.Errorf("dbsock clean on the host left the killed run's container %s:\n%s", id, out)
		}
	}
	if left := runDirs(t, shared); len(left) > 0 {
		t.Errorf("dbsock clean on the host left the killed run's temp dirs %v:\n%s", left, out)
	}
	if left := jobContainers(t, job); len(left) > 0 {
		t.Errorf("after dbsock clean, the killed run's containers %v are still there", left)
	}
}

// TestRunInsideAContainerRefusals: what cannot run from a job container
// is refused before anything starts, with exit status 2 and one line.
func TestRunInsideAContainerRefusals(t *testing.T) {
	needImages(t)
	for _, c := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"temp dir not shared", "TMPDIR=/tmp", nil, "is not shared with the host"},
		{"compose", "TMPDIR=/shared", []string{"--provider", "compose"}, "use --provider docker"},
		{"client container", "TMPDIR=/shared", []string{"--client", "container"}, "use --client host"},
		{"bridge path", "TMPDIR=/shared", []string{"--paths", "tcp,unix,bridge"}, "--network host --pid host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			shared := shortTempDir(t)
			cid := filepath.Join(shared, "cid")
			args := append([]string{"run", "--rm", "--cidfile", cid, "--label", "dbsock-test=incontainer",
				"-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", staticDbsock(t) + ":/dbsock:ro", "-v", shared + ":/shared",
				"-e", c.env, "--entrypoint", "/dbsock", jobImage, "run", "redis", "--provider", "docker"}, c.args...)
			var stderr strings.Builder
			cmd := exec.Command("docker", args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line with %q", code, stderr.String(), c.want)
			}
			if id, err := os.ReadFile(cid); err == nil {
				if left := jobContainers(t, strings.TrimSpace(string(id))); len(left) > 0 {
					t.Errorf("a refused run started containers %v", left)
				}
			}
		})
	}
}
