// Package compose is the Docker Compose provider of dbsock's server supply
// (package supply): Compose starts the services of compose.yaml, the file
// users also run by hand, which it embeds (File).
//
// It is part of dbsock's own machinery, and its API may change between
// versions: programs that measure their own code use package dbsock.
package compose

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
)

// File is compose.yaml: the same file users run by hand, written by go
// generate ./compose (Render) from the targets' descriptions of their
// servers.
//
//go:embed compose.yaml
var File []byte

// Compose starts servers from compose.yaml with Docker Compose (v2 plugin,
// or docker-compose 1.x): one project per run, a private socket dir, free
// ports passed through the environment, random passwords as Compose
// secrets (files in the run's private dir, never in Compose's or a
// container's environment), and "down" afterwards unless Keep is set.
type Compose struct {
	// Services are the targets compose.yaml has a service for, each named
	// after its target; every one gets a port and a password per run.
	Services []supply.Target
	// Images overrides the file's default images per target.
	Images map[string]string
	// Keep leaves the project running after the run (for inspection);
	// "docker compose -p PROJECT down" removes it.
	Keep bool
	// ServerCPUs, when set, becomes every service's cpuset.
	ServerCPUs []int
	// Routes, when set, gives each server the published, bridge, service
	// and pod paths too (a second project: composeroutes.go); Service
	// starts the idle service the service path dials from.
	Routes, Service bool

	mu      sync.Mutex
	compose []string // "docker compose" or docker-compose
	net     *Compose // the second project, for Routes
	// twin marks the second project itself: its servers' ports are
	// published on hostPorts, and pods are its holders so far.
	twin      bool
	hostPorts map[string]int
	pods      []pod
	local     supply.Local // for the private run dir
	composeProject
	serviceValues
	secretWatch map[string]func() // ends putSecrets' supply.RemoveOnceRead
	cpuset      map[string]string // as the engine reports it
	up          bool
}

// composeProject is one compose project of the run: its directory (with
// the services' socket dirs), its name, the compose command line that
// runs it and the environment compose reads.
type composeProject struct {
	dir, project string
	command, env []string
}

// NewCompose returns a compose provider for the services of compose.yaml.
func NewCompose(services []supply.Target) *Compose { return &Compose{Services: services} }

// Name implements supply.Provider.
func (*Compose) Name() string { return "compose" }

// EngineNeeds is what the compose provider needs of the Docker engine,
// and of where dbsock runs: compose.yaml's servers listen on the host
// network, so the engine's must be this host's, and compose hands the
// engine compose.yaml's paths as this host has them, so dbsock cannot run
// it from inside a container.
func EngineNeeds() supply.EngineNeeds {
	return supply.EngineNeeds{Provider: "compose",
		HostNetwork: "compose.yaml's servers listen on the host network's 127.0.0.1",
		HostView:    "runs compose.yaml's paths and host network as the host sees them"}
}

// composeCommand finds "docker compose" or "docker-compose".
func composeCommand() ([]string, error) {
	if err := exec.Command("docker", "compose", "version").Run(); err == nil {
		return []string{"docker", "compose"}, nil
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}, nil
	}
	return nil, errors.New("neither \"docker compose\" nor docker-compose is installed (apt-get install docker-compose)")
}

// prepare makes the run dir, socket dirs, ports, passwords and environment
// once per run.
func (c *Compose) prepare() error {
	if c.dir != "" {
		return nil
	}
	cmd, err := composeCommand()
	if err != nil {
		return fmt.Errorf("%w: compose provider: %v", supply.ErrCannotSupply, err)
	}
	dir, err := c.local.ServerDir("compose")
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(file, File, 0o644); err != nil {
		return err
	}
	c.ports, c.pw, c.cpuset = map[string]int{}, map[string]string{}, map[string]string{}
	if longest := filepath.Join(dir, "longest-service-name", "socket-name-65535.sock"); len(longest) > drivers.MaxSocketPath {
		return fmt.Errorf("compose provider: socket paths under %s would be longer than %d bytes; set TMPDIR to a shorter directory", dir, drivers.MaxSocketPath)
	}
	c.dir, c.compose, c.command = dir, cmd, append(slices.Clone(cmd), "-f", file)
	c.project = "dbsock-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	c.command = append(c.command, "-p", c.project)
	// DBSOCK_BIND is where the servers listen for TCP: 127.0.0.1, and
	// ::1 where this host has it (the tcp6 path); DBSOCK_BIND_SPACED is
	// the same separated by spaces, for servers whose configuration
	// lists addresses so.
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		return err
	}
	c.secrets, c.secretNames, c.secretsDir = map[string]string{}, map[string][]string{}, secrets
	c.env = append(os.Environ(), "DBSOCK_SOCKET_DIR="+dir, "DBSOCK_SECRETS_DIR="+secrets, "DBSOCK_PID="+strconv.Itoa(os.Getpid()), "DBSOCK_OWNER="+supply.Self().String(),
		"DBSOCK_CPUSET="+placement.FormatList(c.ServerCPUs),
		"DBSOCK_BIND="+strings.Join(supply.Loopbacks(), ","), "DBSOCK_BIND_SPACED="+strings.Join(supply.Loopbacks(), " "))
	uses := serviceSecrets()
	for _, t := range c.Services {
		if err := c.prepareService(t, uses[t.Name]); err != nil {
			return err
		}
	}
	for t, ref := range c.Images {
		c.env = append(c.env, "DBSOCK_"+strings.ToUpper(t)+"_IMAGE="+ref)
	}
	return nil
}

// prepareService makes t's socket dir and port, put in the environment
// compose.yaml reads (DBSOCK_<NAME>_PORT, ...), and its secrets, written
// as the files compose.yaml's secrets name: NAME-password, the run's
// password (a bootstrap one, for a target that rotates it), and a random
// value for each other secret its service uses (uses, from its secrets:
// in compose.yaml; e.g. a root password), which only compose.yaml names.
func (c *Compose) prepareService(t supply.Target, uses []string) error {
	sockDir := filepath.Join(c.dir, t.Name)
	if err := os.Mkdir(sockDir, 0o777); err != nil {
		return err
	}
	if err := os.Chmod(sockDir, 0o777); err != nil {
		return err
	}
	var err error
	if c.ports[t.Name], err = supply.FreePort(); err != nil {
		return err
	}
	if c.pw[t.Name], err = supply.RandomPassword(); err != nil {
		return err
	}
	c.env = append(c.env, "DBSOCK_"+strings.ToUpper(t.Name)+"_PORT="+strconv.Itoa(c.ports[t.Name]))
	name := t.Name + "-password"
	c.secrets[name], c.secretNames[t.Name] = c.pw[t.Name], []string{name}
	if t.Container != nil && t.Container.Rotate != nil {
		// The file holds a bootstrap password, changed to the run's once
		// the server is up.
		if c.secrets[name], err = supply.RandomPassword(); err != nil {
			return err
		}
	}
	for _, other := range uses {
		if other == name {
			continue
		}
		if c.secrets[other], err = supply.RandomPassword(); err != nil {
			return err
		}
		c.secretNames[t.Name] = append(c.secretNames[t.Name], other)
	}
	return nil
}

// run runs one compose command; its output goes into the error.
func (c *Compose) run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, c.command[0], append(c.command[1:], args...)...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(c.command[0]), strings.Join(args, " "), err, supply.Tail(string(out), 8))
	}
	return nil
}

// Supply implements supply.Provider: "up -d" the target's service, then probe it
// from the host.
func (c *Compose) Supply(ctx context.Context, t supply.Target) (*supply.Server, error) {
	target := t.Name
	if t.Container == nil || !c.hasService(target) {
		return nil, fmt.Errorf("%w %s: compose provider: compose.yaml has no %s service", supply.ErrCannotSupply, target, target)
	}
	if err := supply.ProbeEngine(ctx, 3*time.Second).CannotRun(EngineNeeds(), false); err != nil {
		return nil, err // before anything starts
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.prepare(); err != nil {
		return nil, err
	}
	image, note, err := supply.ChooseImage(ctx, supply.DockerSocket(), t, c.Images[target])
	if err != nil {
		return nil, fmt.Errorf("%w %s: compose provider: %v", supply.ErrCannotSupply, target, err)
	}
	c.env = append(c.env, "DBSOCK_"+strings.ToUpper(target)+"_IMAGE="+image) // the last one counts
	defer c.takeSecrets(target)                                              // once it is ready, or has failed
	if err := c.upService(ctx, target); err != nil {
		return nil, err
	}
	sockDir := filepath.Join(c.dir, target)
	sp, err := t.Container.Spec(supply.SpecFor{Port: c.ports[target], Dir: sockDir, Bind: "127.0.0.1"})
	if err != nil {
		return nil, err
	}
	bootstrap := map[string]string{}
	for _, name := range c.secretNames[target] {
		bootstrap[name] = c.secrets[name]
	}
	sp.Ready = supply.Rotating(t.Container.Rotate, bootstrap, sp.Ready)
	srv := &supply.Server{Target: target, Provenance: drivers.Provenance{Provider: c.Name(), Image: image, NetworkMode: "host", SocketDir: sockDir,
		Origin: fmt.Sprintf("docker compose service %s of project %s, image %s", target, c.project, image)}}
	port := c.ports[target]
	if c.twin {
		srv.NetworkMode, port = "the network namespace of service "+podOf(target), c.hostPorts[target]
	}
	if no := c.CannotServe(supply.TLSPath(), nil); no != nil {
		srv.SetAbsent(no, supply.TLSPath())
	}
	if note != "" {
		srv.Warnings = append(srv.Warnings, note)
	}
	// The service takes its password from the environment; the spec says
	// whether the server has one at all, and its account and database.
	pw := ""
	if sp.Password != "" {
		pw = c.pw[target]
	}
	srv.Set(supply.Served(drivers.Endpoint{User: sp.User, Password: pw, Database: sp.Database}, "127.0.0.1:"+strconv.Itoa(port), filepath.Join(sockDir, sp.Socket)))
	pid := c.describe(ctx, target, srv)
	if err := c.waitReady(ctx, srv, sp.Ready); err != nil {
		return nil, err
	}
	srv.RunsAs = supply.RunsAs(pid) // the entrypoint has dropped root by now
	supply.OfferLoopbacks(ctx, srv, !c.twin, "")
	tree, _ := srv.CPU.(*cpustat.Tree)
	supply.SetRestart(srv, func(ctx context.Context) error { return c.restartService(ctx, srv, sp.Ready, tree) })
	supply.SetStop(srv, c.stopService(target))
	if c.Routes && !c.twin {
		if err := c.addRoutes(ctx, t, image, srv); err != nil {
			return nil, errors.Join(err, srv.Stop(context.Background()))
		}
	}
	return srv, nil
}

// stopService stops target's service, unless Keep: a throwaway server
// needs no grace period, so its container is force-removed through the
// engine's API (compose rm --stop would wait its 10 s stop timeout);
// compose itself is the fallback.
func (c *Compose) stopService(target string) func(context.Context) error {
	return func(ctx context.Context) error {
		if c.Keep {
			return nil
		}
		if _, err := supply.RemoveLabelled(ctx, supply.DockerSocket(), "containers", "com.docker.compose.project="+c.project, "com.docker.compose.service="+target); err == nil {
			return nil
		}
		return errors.Join(c.run(ctx, "stop", "-t", "1", target), c.run(ctx, "rm", "--force", "-v", target))
	}
}

// upService starts target's service ("up -d") with its secrets.
func (c *Compose) upService(ctx context.Context, target string) error {
	uctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := c.putSecrets(target); err != nil {
		return err
	}
	if err := c.run(uctx, "up", "-d", target); err != nil {
		return fmt.Errorf("start compose service %s: %w", target, err)
	}
	c.up = true
	return nil
}

// restartService restarts the service's container (compose restart: its
// data kept) and waits until the server is ready; srv's CPU meter (tree,
// which a server joined to others sums) follows the container's new first
// process.
func (c *Compose) restartService(ctx context.Context, srv *supply.Server, ready func(context.Context, *supply.Server) error, tree *cpustat.Tree) error {
	c.mu.Lock()
	err := c.putSecrets(srv.Target)
	if err == nil {
		err = c.run(ctx, "restart", "-t", "10", srv.Target)
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.takeSecrets(srv.Target)
		c.mu.Unlock()
	}()
	if err != nil {
		return fmt.Errorf("restart compose service %s: %w", srv.Target, err)
	}
	if err := c.waitReady(ctx, srv, ready); err != nil {
		return err
	}
	c.mu.Lock()
	_, pid := c.inspect(ctx, srv.Target)
	c.mu.Unlock()
	if pid > 0 && tree != nil {
		tree.Root = pid
	}
	return nil
}

func (c *Compose) hasService(name string) bool {
	for _, t := range c.Services {
		if t.Name == name {
			return true
		}
	}
	return false
}

// imageID reads the image ID of the service's container.
// inspect reads the service's container: its image ID and the host pid of
// its first process ("" and 0 when the engine does not say).
func (c *Compose) inspect(ctx context.Context, target string) (imageID string, pid int) {
	cmd := exec.CommandContext(ctx, c.command[0], append(c.command[1:], "ps", "-q", target)...)
	cmd.Env = c.env
	out, err := cmd.Output()
	if err != nil {
		return "", 0
	}
	id := strings.TrimSpace(string(out))
	resp, err := supply.DockerAPI(ctx, supply.DockerSocket(), http.MethodGet, "/containers/"+id+"/json")
	if err != nil {
		return "", 0
	}
	defer resp.Body.Close()
	var insp struct {
		Image      string
		State      struct{ Pid int }
		HostConfig struct{ CpusetCpus string }
	}
	if json.NewDecoder(resp.Body).Decode(&insp) != nil {
		return "", 0
	}
	c.cpuset[target] = insp.HostConfig.CpusetCpus
	return insp.Image, insp.State.Pid
}

// waitReady probes srv until it is ready; a service whose container exits
// meanwhile is an error at once, with the last lines of its log.
func (c *Compose) waitReady(ctx context.Context, srv *supply.Server, ready func(context.Context, *supply.Server) error) error {
	err := supply.Poll(ctx, 3*time.Minute, supply.ReadyProbe(srv, ready), func() error { return c.exited(ctx, srv.Target) })
	var late *supply.NotReady
	if errors.As(err, &late) {
		return fmt.Errorf("compose service %s of project %s was not ready after 3 minutes (last probe: %v); its log says:\n%s", srv.Target, c.project, late.Last, c.logTail(ctx, srv.Target))
	}
	return err
}

// service is what the engine says of a service's container.
type service struct {
	ID       string `json:"Id"`
	State    string
	ExitCode int
}

// container finds the service's container through the engine's API (compose
// labels it), running or not; ok is false when the engine does not say.
func (c *Compose) container(ctx context.Context, target string) (s service, ok bool) {
	b, _ := json.Marshal(map[string][]string{"label": {"com.docker.compose.project=" + c.project, "com.docker.compose.service=" + target}})
	resp, err := supply.DockerAPI(ctx, supply.DockerSocket(), http.MethodGet, "/containers/json?all=1&filters="+url.QueryEscape(string(b)))
	if err != nil {
		return s, false
	}
	defer resp.Body.Close()
	var found []service
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&found) != nil || len(found) == 0 {
		return s, false
	}
	s = found[0]
	if s.State == "exited" || s.State == "dead" {
		if resp, err := supply.DockerAPI(ctx, supply.DockerSocket(), http.MethodGet, "/containers/"+s.ID+"/json"); err == nil {
			var insp struct{ State struct{ ExitCode int } }
			_ = json.NewDecoder(resp.Body).Decode(&insp)
			resp.Body.Close()
			s.ExitCode = insp.State.ExitCode
		}
	}
	return s, true
}

// exited is an error when the service's container has exited (or died),
// with its exit code and the last lines of its log; nil while it runs.
func (c *Compose) exited(ctx context.Context, target string) error {
	s, ok := c.container(ctx, target)
	if !ok || (s.State != "exited" && s.State != "dead") {
		return nil
	}
	return fmt.Errorf("compose service %s of project %s exited before it was ready (exit %d); its log says:\n%s", target, c.project, s.ExitCode, c.logTail(ctx, target))
}

// logTail is the last lines of the service's container log, or how to read
// it when the engine does not give it.
func (c *Compose) logTail(ctx context.Context, target string) string {
	by := fmt.Sprintf("(see docker compose -p %s logs %s)", c.project, target)
	s, ok := c.container(ctx, target)
	if !ok {
		return by
	}
	resp, err := supply.DockerAPI(ctx, supply.DockerSocket(), http.MethodGet, "/containers/"+s.ID+"/logs?stdout=1&stderr=1&tail=200")
	if err != nil {
		return by
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	// A container without a TTY multiplexes stdout and stderr.
	if _, err := stdcopy.StdCopy(&out, &out, io.LimitReader(resp.Body, 1<<20)); err != nil && out.Len() == 0 {
		return by
	}
	return supply.Tail(out.String(), 8)
}

// Close implements supply.Provider: "down -v" the project unless Keep, then remove
// the run dir.
func (c *Compose) Close() error {
	var errs []error
	if c.net != nil {
		errs = append(errs, c.net.Close()) // the second project first: it lives in the run dir
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.up && !c.Keep {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		// What "down -v" does, through the engine's API at once; compose
		// itself (a second or more per call) is the fallback.
		project := "com.docker.compose.project=" + c.project
		_, cerr := supply.RemoveLabelled(ctx, supply.DockerSocket(), "containers", project)
		_, nerr := supply.RemoveLabelled(ctx, supply.DockerSocket(), "networks", project)
		if cerr != nil || nerr != nil {
			errs = append(errs, c.run(ctx, "down", "-v", "--remove-orphans", "-t", "1"))
		}
		cancel()
	}
	if !c.Keep {
		errs = append(errs, c.local.Close())
	}
	return errors.Join(errs...)
}

// Project is the compose project name of this run ("" before it starts).
func (c *Compose) Project() string { return c.project }

// describe records what the engine says of target's container in srv
// (image ID, cpuset, its process tree's CPU) and returns its first pid.
func (c *Compose) describe(ctx context.Context, target string, srv *supply.Server) int {
	var pid int
	srv.ImageID, pid = c.inspect(ctx, target)
	if cpus := c.cpuset[target]; cpus != "" {
		srv.CPUs = cpus + " (container cpuset)"
	}
	if srv.CPUs == "" {
		srv.Warnings = append(srv.Warnings, "This compose service was not pinned to a CPU (no cpuset), whatever the client's placement.")
	}
	if pid > 0 {
		srv.CPU = cpustat.NewTree(pid, "container process tree (every process in the container)")
		srv.CPUGroup = supply.CgroupNote(pid, 0)
	} else {
		srv.CPUWhyNot = "the engine did not say which process runs the container"
	}
	return pid
}

// CannotServe implements supply.PathServer: compose.yaml's services have no
// certificate.
func (*Compose) CannotServe(t drivers.Transport, _ []string) error {
	if t.Info().TLS {
		return setting.Err("compose.yaml gives its services no certificate; %s docker or local serves the tls path", setting.Provider)
	}
	return nil
}
