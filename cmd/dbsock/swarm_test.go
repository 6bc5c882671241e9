package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/reports"
)

// TestSwarmGlobalJob runs dbsock once on every node of a Docker swarm, as
// docs/fleet.md tells a user to: a global job (a task per node; this
// machine is a swarm of one), from an image of dbsock/redis:7.0 with a
// static dbsock in it, measuring Redis as a local process in the task's
// container under the node's name (the task's hostname), its result file
// gathered from each task's log into one directory; dbsock report of that
// directory is the fleet's matrix, its column the node, its cell a
// verdict. The task pins its processes (the job adds CAP_SYS_NICE, which
// a container lacks: without it the run says "may not pin"). The engine
// is left as found: a swarm this test made is left again, and its bridge
// network removed; in a swarm already there only the service goes.
func TestSwarmGlobalJob(t *testing.T) {
	needImages(t)
	bin := staticDbsock(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	joinSwarm(ctx, t)
	image := fleetImage(ctx, t, bin)
	name := fmt.Sprintf("dbsock-fleet-test-%d", os.Getpid())
	t.Cleanup(func() { _, _ = dockerOut(context.Background(), "service", "rm", name) })
	// Without --detach, service create returns once the job has completed.
	if out, err := dockerOut(ctx, "service", "create", "--quiet", "--name", name, "--mode", "global-job",
		"--restart-condition", "none", "--cap-add", "CAP_SYS_NICE", "--hostname", "{{.Node.Hostname}}", image,
		"dbsock", "run", "redis", "--provider", "local", "--placement", "shared",
		"--n", "300", "--warmup", "30", "--instances", "1", "--rounds", "2", "-q", "--format", "json"); err != nil {
		t.Fatalf("docker service create --mode global-job: %v\n%s", err, out)
	}
	node, err := dockerOut(ctx, "node", "inspect", "self", "--format", "{{.Description.Hostname}}")
	if err != nil {
		t.Fatal(err, node)
	}
	fleet := gatherTasks(ctx, t, name)
	rep, err := readReport(fleet[0])
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Config.Placement; rep.Environment.Host != node || p.Mode == "none" || p.ServerCPUs == "" {
		t.Errorf("the task's file: host %q (want the node's name %q), placement %+v (want its processes pinned)", rep.Environment.Host, node, p)
	}
	dir := filepath.Dir(fleet[0])
	code, md, stderr := dbsock(t, "report", dir)
	if code != 0 || !strings.Contains(md, "| target | case | paths | "+node+" |") || !strings.Contains(md, "| redis | pk") {
		t.Fatalf("dbsock report %s: exit status %d (%s), want the matrix with a column for node %s:\n%s", dir, code, stderr, node, md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| target |") || strings.HasPrefix(line, "| redis |") {
			t.Log(line)
		}
	}
	_, js, _ := dbsock(t, "report", dir, "--format", "json")
	var h reports.Hosts
	if err := json.Unmarshal([]byte(js), &h); err != nil || len(h.Matrices) != 1 || len(h.Matrices[0].Hosts) != 1 || h.Matrices[0].Hosts[0].Label != node {
		t.Fatalf("the matrix as JSON: %v, want one host, %s:\n%s", err, node, js)
	}
	for _, row := range h.Matrices[0].Rows {
		if c := row.Cells[0]; c == nil || c.VerdictKind == "" || c.Verdict == "" || c.SpeedupP50 <= 0 {
			t.Errorf("row %s: cell %+v, want the node's verdict", row.Label(), c)
		}
	}
}

// dockerOut runs the docker command line with args and returns its
// output, trimmed.
func dockerOut(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// joinSwarm makes the engine a swarm manager for the test: an inactive
// engine inits a swarm of its own on 127.0.0.1, which the test's cleanup
// leaves, removing the bridge network (docker_gwbridge) a task made if it
// was not there before; a manager is used as it is; any other state is
// not the test's to change.
func joinSwarm(ctx context.Context, t *testing.T) {
	t.Helper()
	state, err := dockerOut(ctx, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}")
	if err != nil {
		t.Fatalf("docker info: %v: %s", err, state)
	}
	switch state {
	case "active true":
		t.Log("the engine is a swarm manager already: only the test's service and image are removed")
		return
	case "inactive false":
	default:
		t.Fatalf("the engine's swarm state is %q: neither out of a swarm nor its manager, so the test may not make a service there; run it on an engine out of swarm mode, or on a manager", state)
	}
	nets, err := dockerOut(ctx, "network", "ls", "--format", "{{.Name}}")
	if err != nil {
		t.Fatal(err, nets)
	}
	hadBridge := slices.Contains(strings.Fields(nets), "docker_gwbridge")
	if out, err := dockerOut(ctx, "swarm", "init", "--advertise-addr", "127.0.0.1"); err != nil {
		t.Fatalf("docker swarm init --advertise-addr 127.0.0.1: %v: %s", err, out)
	}
	t.Cleanup(func() {
		bg := context.Background()
		if out, err := dockerOut(bg, "swarm", "leave", "--force"); err != nil {
			t.Errorf("docker swarm leave --force: %v: %s", err, out)
		}
		if !hadBridge {
			// The network goes once the task's container has.
			var out string
			for i := 0; i < 50; i++ {
				if out, err = dockerOut(bg, "network", "rm", "docker_gwbridge"); err == nil || strings.Contains(out, "not found") {
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
			t.Errorf("docker network rm docker_gwbridge (the swarm's, which the engine did not have before): %v: %s", err, out)
		}
	})
}

// fleetImage builds the image a user's global job runs: dbsock/redis:7.0
// (redis-server in it) with bin, a static dbsock, on its PATH. The test
// removes it.
func fleetImage(ctx context.Context, t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dbsock"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM dbsock/redis:7.0\nCOPY dbsock /usr/local/bin/dbsock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := fmt.Sprintf("dbsock-fleet-test:%d", os.Getpid())
	if out, err := dockerOut(ctx, "build", "--quiet", "--tag", image, dir); err != nil {
		t.Fatalf("docker build %s: %v: %s", image, err, out)
	}
	t.Cleanup(func() { _, _ = dockerOut(context.Background(), "image", "rm", "--force", image) })
	return image
}

// gatherTasks writes each completed task's log, dbsock's JSON, to a file
// of its own in one directory, as docs/fleet.md's second line does, and
// returns the files: one per node, each task's standard error empty.
func gatherTasks(ctx context.Context, t *testing.T, service string) []string {
	t.Helper()
	ps, err := dockerOut(ctx, "service", "ps", "--quiet", "--filter", "desired-state=complete", service)
	if err != nil {
		t.Fatalf("docker service ps %s: %v: %s", service, err, ps)
	}
	dir := t.TempDir()
	var files []string
	for _, task := range strings.Fields(ps) {
		cmd := exec.CommandContext(ctx, "docker", "service", "logs", "--raw", task)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 || len(out) == 0 {
			t.Fatalf("docker service logs --raw %s: %v, %d bytes; stderr:\n%s", task, err, len(out), stderr.String())
		}
		files = append(files, filepath.Join(dir, task+".json"))
		if err := os.WriteFile(files[len(files)-1], out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) != 1 {
		t.Fatalf("%d completed tasks (%q), want one on this machine, a swarm of one node", len(files), ps)
	}
	return files
}
