package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// requireEnv set makes a test fail where it would skip for want of Docker
// or an image (as in dbsock's own module).
const requireEnv = "DBSOCK_REQUIRE_SERVERS"

// TestPodUnderDocker runs the manifest's pod, as the strict decoding reads
// it back, on this machine's Docker engine as a kubelet would run it on
// node-a: its containers in one network namespace of their own, its
// emptyDir volumes as fresh directories open to all (an emptyDir's mode),
// each container as its securityContext says (user, read-only root, no
// capability, no privilege to gain), the sidecar started first and waited
// for by its startup probe, dbsock run to completion after it, then the
// result container, whose log is gathered as kubectl logs would gather it
// into a directory that dbsock report reads: a column node-a with a
// verdict. The images are the offline ones (dbsock/redis:7.0 for
// redis:7.4) and a dbsock image FROM scratch, as docs/fleet.md says to
// build it. No kubelet runs here: what only a kubelet does (scheduling,
// the anti-affinity, the downward API, ending the sidecar) is not tested.
func TestPodUnderDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker and dbsock/redis:7.0; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	needImage(ctx, t, "dbsock/redis:7.0")
	bin := buildDbsock(ctx, t)
	o := Defaults
	o.RedisImage = "dbsock/redis:7.0"
	o.DbsockImage = scratchImage(ctx, t, bin)
	o.RunFlags = []string{"--n", "300", "--warmup", "30", "--instances", "1", "--rounds", "2", "--placement", "shared"}
	m, err := Manifest(o, "go run .")
	if err != nil {
		t.Fatal(err)
	}
	job, err := strictJob(t, m)
	if err != nil {
		t.Fatal(err)
	}
	p := &podRun{t: t, ctx: ctx, node: "node-a", prefix: fmt.Sprintf("dbsock-pod-test-%d", os.Getpid()), volumes: map[string]string{}}
	spec := job.Spec.Template.Spec
	for _, v := range spec.Volumes {
		if v.EmptyDir == nil {
			t.Fatalf("volume %s is not an emptyDir: this test makes emptyDirs alone", v.Name)
		}
		p.volumes[v.Name] = t.TempDir()
		if err := os.Chmod(p.volumes[v.Name], 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			p.sidecar(c)
		} else if out, code := p.run(c); code != 0 {
			t.Fatalf("init container %s exited %d:\n%s", c.Name, code, out)
		}
	}
	fleet := t.TempDir()
	for _, c := range spec.Containers {
		out, code := p.run(c)
		if code != 0 {
			t.Fatalf("container %s exited %d:\n%s", c.Name, code, out)
		}
		if err := os.WriteFile(filepath.Join(fleet, p.prefix+".json"), []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	report, err := exec.CommandContext(ctx, bin, "report", fleet).CombinedOutput()
	if err != nil || !strings.Contains(string(report), "| target | case | paths | node-a |") || !strings.Contains(string(report), "| redis | pk") {
		t.Fatalf("dbsock report %s: %v, want a matrix with node-a's column:\n%s", fleet, err, report)
	}
	for _, line := range strings.Split(string(report), "\n") {
		if strings.HasPrefix(line, "| redis |") {
			t.Log(line)
			if !strings.Contains(line, "faster") && !strings.Contains(line, "undecided") && !strings.Contains(line, "no difference") {
				t.Errorf("node-a's cell has no verdict: %s", line)
			}
		}
	}
}

// podRun runs a pod's containers under Docker.
type podRun struct {
	t       *testing.T
	ctx     context.Context
	node    string
	prefix  string            // of its containers' names
	netns   string            // the first container, whose network namespace the others join
	volumes map[string]string // volume name -> host directory
}

// args are docker run's arguments for c, as a kubelet would run it.
func (p *podRun) args(c corev1.Container) []string {
	args := []string{"run", "--name", p.prefix + "-" + c.Name, "--network", "none"}
	if p.netns != "" {
		args[len(args)-1] = "container:" + p.netns
	}
	vars := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
			v = p.node
		} else if e.ValueFrom != nil {
			p.t.Fatalf("container %s: env %s comes from %+v, which this test does not stand in for", c.Name, e.Name, e.ValueFrom)
		}
		vars[e.Name] = v
		args = append(args, "--env", e.Name+"="+v)
	}
	for _, m := range c.VolumeMounts {
		bind := p.volumes[m.Name] + ":" + m.MountPath
		if m.ReadOnly {
			bind += ":ro"
		}
		args = append(args, "--volume", bind)
	}
	if s := c.SecurityContext; s != nil {
		args = append(args, "--user", strconv.FormatInt(*s.RunAsUser, 10)+":"+strconv.FormatInt(*s.RunAsGroup, 10))
		if *s.ReadOnlyRootFilesystem {
			args = append(args, "--read-only")
		}
		if !*s.AllowPrivilegeEscalation {
			args = append(args, "--security-opt", "no-new-privileges")
		}
		for _, cap := range s.Capabilities.Drop {
			args = append(args, "--cap-drop", string(cap))
		}
	}
	words := c.Args
	if len(c.Command) > 0 {
		args = append(args, "--entrypoint", c.Command[0])
		words = append(c.Command[1:len(c.Command):len(c.Command)], c.Args...)
	}
	args = append(args, c.Image)
	for _, w := range words {
		for k, v := range vars { // $(VAR), as a kubelet expands it
			w = strings.ReplaceAll(w, "$("+k+")", v)
		}
		args = append(args, w)
	}
	return args
}

// sidecar starts c and waits for its startup probe, as a kubelet does
// before it starts the next init container; the test removes it.
func (p *podRun) sidecar(c corev1.Container) {
	args := p.args(c)
	args = append([]string{args[0], "--detach"}, args[1:]...)
	name := p.prefix + "-" + c.Name
	if p.netns == "" {
		p.netns = name
	}
	p.t.Cleanup(func() { _ = exec.Command("docker", "rm", "--force", name).Run() })
	if out, err := exec.CommandContext(p.ctx, "docker", args...).CombinedOutput(); err != nil {
		p.t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
	probe := c.StartupProbe
	for i := int32(0); ; i++ {
		out, err := exec.CommandContext(p.ctx, "docker", append([]string{"exec", name}, probe.Exec.Command...)...).CombinedOutput()
		if err == nil {
			return
		}
		if i == probe.FailureThreshold {
			logs, _ := exec.Command("docker", "logs", name).CombinedOutput()
			p.t.Fatalf("sidecar %s: its startup probe %v failed %d times: %v: %s\nlog:\n%s", c.Name, probe.Exec.Command, i, err, out, logs)
		}
		time.Sleep(time.Duration(probe.PeriodSeconds) * time.Second)
	}
}

// run runs c to its end and returns its standard output (its log, as
// kubectl logs gives it; its standard error is logged) and exit code.
func (p *podRun) run(c corev1.Container) (string, int) {
	if p.netns == "" {
		p.t.Fatalf("container %s would start before the sidecar whose network namespace it joins", c.Name)
	}
	args := p.args(c)
	name := p.prefix + "-" + c.Name
	p.t.Cleanup(func() { _ = exec.Command("docker", "rm", "--force", name).Run() })
	cmd := exec.CommandContext(p.ctx, "docker", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	p.t.Logf("%s's standard error:\n%s", c.Name, stderr.String())
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out) + stderr.String(), exit.ExitCode()
	}
	if err != nil {
		p.t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// needImage skips (or, with DBSOCK_REQUIRE_SERVERS set, fails) unless
// Docker answers and has image.
func needImage(ctx context.Context, t *testing.T, image string) {
	t.Helper()
	if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("Docker image %s is not here (%v: %s): run make images in dbsock's checkout", image, err, strings.TrimSpace(string(out)))
		if os.Getenv(requireEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// buildDbsock builds a static dbsock from the checkout this module is in.
func buildDbsock(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dbsock")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dbsock")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build dbsock in ../..: %v\n%s", err, out)
	}
	return bin
}

// scratchImage builds the dbsock image docs/fleet.md says to build: FROM
// scratch, the static dbsock its entrypoint. The test removes it.
func scratchImage(ctx context.Context, t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dbsock"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY dbsock /dbsock\nENTRYPOINT [\"/dbsock\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := fmt.Sprintf("dbsock-pod-test:%d", os.Getpid())
	if out, err := exec.CommandContext(ctx, "docker", "build", "--quiet", "--tag", image, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build %s: %v: %s", image, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "--force", image).Run() })
	return image
}
