package supply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
)

// Label marks every container dbsock creates; RunLabel holds the run's ID.
// PIDLabel holds the pid of the dbsock that started the container, so that
// "dbsock clean" can tell a live run's containers from a killed one's.
const (
	Label    = "dbsock"
	RunLabel = "dbsock.run"
	PIDLabel = "dbsock.pid"
	// OwnerLabel holds the Owner of that dbsock (pid, start time, boot
	// id), which tells it apart from another process of the same pid in
	// another PID namespace.
	OwnerLabel = "dbsock.owner"
)

// Docker starts servers as containers (with the runtime package
// supply/containers registers: testcontainers-go): host
// networking with the server on a free 127.0.0.1 port (so that TCP takes
// the same loopback path as a native server), and the server's socket
// directory bind-mounted from a private temp dir on the host.
//
// dbsock removes its containers itself: on Stop, on Close, and with
// "dbsock clean" for runs that were killed. It leaves testcontainers'
// process-wide settings as it finds them (its reaper, Ryuk, and its default
// logger): the dbsock command turns them off with QuietTestcontainers; a
// program of yours that also uses testcontainers keeps its own.
type Docker struct {
	// Images overrides the recipes' images per target.
	Images map[string]string
	// ServerCPUs, when set, becomes each container's cpuset.
	ServerCPUs []int

	// Routes, when set, gives each server the published, bridge, service
	// and pod paths too: a second container of it on a bridge network of
	// the run's.
	Routes bool
	// Service, with Routes, starts the idle container the service path
	// dials from (one per run).
	Service bool
	// TLS, when set, gives each server the tls path too (with host
	// networking): the run's certificate and key in its socket directory,
	// and a TLS listener on 127.0.0.1.
	TLS bool

	runID   string
	local   Local // only for its private temp dir
	network Network
	nbMu    sync.Mutex          // held while the neighbour starts
	nb      *neighbourContainer // the service path's, once started
	mu      sync.Mutex
	probe   *Engine
	// home is the container dbsock runs in (nil: on the host), and owner
	// what its containers' labels record; both set by usableEngine, under
	// omu (labels are made under mu too).
	omu    sync.Mutex
	home   *Home
	owner  Owner
	stops  map[string]func(context.Context) error
	closed bool
}

// NewDocker returns a docker provider.
func NewDocker() *Docker {
	return &Docker{runID: strconv.FormatInt(time.Now().UnixNano(), 36), stops: map[string]func(context.Context) error{}}
}

// Name implements Provider.
func (*Docker) Name() string { return "docker" }

// engine asks the Docker engine once what it is.
func (d *Docker) engine(ctx context.Context) Engine {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.probe == nil {
		p := ProbeEngine(ctx, 3*time.Second)
		d.probe = &p
	}
	return *d.probe
}

// Supply implements Provider.
func (d *Docker) Supply(ctx context.Context, t Target) (*Server, error) {
	target := t.Name
	if t.Container == nil {
		return nil, fmt.Errorf("%w %s: docker provider: it has no image: its server is dbsock's own and runs as a local child process", ErrCannotSupply, target)
	}
	if t.Container.Behind != nil {
		return d.supplyInFront(ctx, t)
	}
	eng, err := d.usableEngine(ctx, target)
	if err != nil {
		return nil, err
	}
	if _, err := containerRuntime(); err != nil {
		return nil, fmt.Errorf("%w %s: docker provider: %v", ErrCannotSupply, target, err)
	}
	image, note, err := ChooseImage(ctx, eng.Socket, t, d.Images[target])
	if err != nil {
		return nil, fmt.Errorf("%w %s: docker provider: %v", ErrCannotSupply, target, err)
	}
	hostNet := eng.HostNetwork || d.joined()
	spec, dir, port, _, err := d.spec(t, hostNet)
	if err != nil {
		return nil, err
	}
	srv := &Server{Target: target, Provenance: drivers.Provenance{Provider: d.Name(), Image: image, SocketDir: dir, NetworkMode: d.networkMode()}}
	if note != "" {
		srv.Warnings = append(srv.Warnings, note)
	}
	req := d.containerRequest(image, target, dir, port, hostNet, spec)
	if !hostNet {
		if req.Network, err = d.offHostNetwork(ctx, srv, eng); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	c, err := d.startContainer(ctx, port, spec, srv, req)
	if err != nil {
		return nil, err
	}
	srv.Origin = StandInOrigin(srv.Origin, t.Container, image)
	if st, err := c.Inspect(ctx); err == nil && d.hostPIDs() {
		srv.RunsAs = RunsAs(st.Pid) // the entrypoint has dropped root by now
	}
	no6 := ""
	if !hostNet {
		no6 = "its TCP port is published by Docker on 127.0.0.1 only"
	}
	OfferLoopbacks(ctx, srv, hostNet, no6)
	noTLS := spec.NoTLS
	if !d.TLS {
		noTLS = errors.New("the tls path was not asked for")
	}
	offerTLS(srv, noTLS, spec.TLSPort, "its TLS port would be published by Docker, not loopback")
	config := takeConfig(dir, spec)
	tree, _ := srv.CPU.(*cpustat.Tree)
	srv.restart = func(ctx context.Context) error { return restartContainer(ctx, c, srv, dir, spec, config, tree) }
	if err := d.routes(ctx, t, image, srv, hostNet); err != nil {
		return nil, errors.Join(err, srv.Stop(context.Background()))
	}
	if t.Container.Hops != nil {
		t.Container.Hops(srv)
	}
	srv.SocketDir = d.hostPath(dir) // the report's: the host's directory
	return srv, nil
}

// spec is t's container spec in a socket directory and on a free port of
// its own, listening on bind: with host networking (or in the network
// namespace of the container dbsock runs in) dbsock's 127.0.0.1 (and ::1,
// for the tcp6 path); behind a published port the container's interface,
// which Docker publishes on 127.0.0.1 only. Its readiness check first
// changes the bootstrap passwords to the run's (Container.Rotate).
func (d *Docker) spec(t Target, hostNet bool) (spec ContainerSpec, dir string, port int, bind string, err error) {
	if dir, port, err = d.socketDirAndPort(t.Name); err != nil {
		return spec, "", 0, "", err
	}
	bind = strings.Join(Loopbacks(), ",")
	if !hostNet {
		bind = "0.0.0.0"
	}
	sf := SpecFor{Port: port, Dir: dir, Bind: bind}
	if hostNet && d.TLS {
		// The tls path: behind a published port the TLS port would need
		// publishing too, and it would not be loopback anyway.
		if sf.TLS, sf.TLSPort, err = containerTLS(dir); err != nil {
			os.RemoveAll(dir)
			return spec, "", 0, "", err
		}
	}
	if spec, err = t.Container.Spec(sf); err != nil {
		os.RemoveAll(dir)
		return spec, "", 0, "", err
	}
	spec.Ready = Rotating(t.Container.Rotate, spec.Secrets, spec.Ready)
	return spec, dir, port, bind, nil
}

// offHostNetwork is the network of a server container without host
// networking: it listens on every address of its own network namespace,
// so only the run's own bridge network may carry it (Docker isolates a
// bridge network made for a purpose from its default bridge, where any
// container lands unless told otherwise, and from every other network),
// and its port is published on 127.0.0.1. srv says so.
func (d *Docker) offHostNetwork(ctx context.Context, srv *Server, eng Engine) (Network, error) {
	nw, err := d.runNetwork(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", srv.Target, err)
	}
	srv.NetworkMode = "published port"
	srv.Warnings = append(srv.Warnings, fmt.Sprintf("Host networking is not available here (%s): the server container is on the run's own bridge network %s, and TCP goes through the port Docker publishes on 127.0.0.1 (%s); the TCP numbers are not loopback-to-server numbers.", engineKind(eng), nw.Name(), publishPath(eng)))
	return nw, nil
}

// publishPath says what a port published on 127.0.0.1 crosses.
func publishPath(e Engine) string {
	if e.Rootless {
		return "rootlesskit's port forwarding into the engine's own network namespace"
	}
	return "Docker's userland proxy or its NAT rules"
}

// startContainer runs req as srv (its SocketDir the container's /sock),
// removed with its socket dir on srv's Stop, and waits until the server
// is ready.
func (d *Docker) startContainer(ctx context.Context, port int, spec ContainerSpec, srv *Server, req ContainerRequest) (RunningContainer, error) {
	dir := srv.SocketDir
	if err := writeSecrets(dir, spec); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	defer RemoveOnceRead(secretPaths(dir, spec))()
	c, err := runContainer(ctx, req)
	cleanup := func(ctx context.Context) error {
		var errs []error
		if c != nil {
			errs = append(errs, c.Remove(ctx, time.Second))
		}
		return errors.Join(append(errs, os.RemoveAll(dir))...)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start %s container from %s: %w", srv.Target, req.Image, err), cleanup(context.Background()))
	}
	srv.stop = cleanup
	d.track(srv, cleanup)
	describeContainer(ctx, c, srv, req.Image, port, spec)
	if !d.hostPIDs() {
		srv.CPU, srv.CPUGroup = nil, ""
		srv.CPUWhyNot = fmt.Sprintf("dbsock runs in container %s, in a PID namespace of its own, and the engine names the server's processes by the host's pids; run the job with --pid host to have the server's CPU time", d.inContainer().Short())
	}
	if err := waitContainer(ctx, c, srv, spec.Ready); err != nil {
		return nil, errors.Join(err, srv.Stop(context.Background()))
	}
	return c, nil
}

// socketDirAndPort makes target's socket directory, open to the
// container's users (uid 999 in the official images) inside the 0700 run
// dir, and finds a free port for its server.
func (d *Docker) socketDirAndPort(target string) (string, int, error) {
	dir, err := d.local.ServerDir(target)
	if err != nil {
		return "", 0, err
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		os.RemoveAll(dir)
		return "", 0, err
	}
	port, err := freePort6()
	if err != nil {
		os.RemoveAll(dir)
		return "", 0, err
	}
	return dir, port, nil
}

// restartContainer stops c and starts it again (the same container, its
// data kept), with its config file and secrets back in its socket
// directory dir while it starts, and waits until the server is ready;
// srv's CPU meter follows the container's new first process.
func restartContainer(ctx context.Context, c RunningContainer, srv *Server, dir string, spec ContainerSpec, config handOver, tree *cpustat.Tree) error {
	if err := c.Stop(ctx, 10*time.Second); err != nil {
		return fmt.Errorf("restart %s container: stop: %w", srv.Target, err)
	}
	remove, err := config.putBack(dir)
	if err != nil {
		return fmt.Errorf("restart %s container: write its config back: %w", srv.Target, err)
	}
	defer remove()
	defer RemoveOnceRead(secretPaths(dir, spec))()
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("restart %s container: start: %w", srv.Target, err)
	}
	if err := waitContainer(ctx, c, srv, spec.Ready); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if st, err := c.Inspect(ctx); err == nil && st.Pid > 0 && tree != nil {
		// The same meter, moved to the new process: a server joined to
		// others (the paths' second container) sums the meters it holds.
		tree.Root = st.Pid
	}
	return nil
}

// containerRequest is target's container from image: its command line
// and environment, dbsock's labels, the bind-mounted socket dir, host
// networking (or a port published on 127.0.0.1) and the cpuset.
func (d *Docker) containerRequest(image, target, dir string, port int, hostNet bool, spec ContainerSpec) ContainerRequest {
	req := ContainerRequest{
		Image: image, Cmd: spec.Cmd, Env: spec.Env, User: spec.RunAs,
		Labels:      d.labels(target),
		Binds:       []string{d.hostPath(dir) + ":/sock"},
		HostNetwork: hostNet,
		CPUs:        placement.FormatList(d.ServerCPUs),
	}
	switch {
	case hostNet && d.joined():
		req.HostNetwork, req.NetworkOf = false, d.inContainer().ID
	case !hostNet:
		req.Publish = port
	}
	return req
}

// labels are the labels of the run's container for target.
func (d *Docker) labels(target string) map[string]string {
	return map[string]string{Label: "1", RunLabel: d.runID, Label + ".target": target, PIDLabel: strconv.Itoa(os.Getpid()), OwnerLabel: d.ownerLabel()}
}

// describeContainer records in srv what the engine says of the started
// container c (image ID, cpuset) and the two endpoints it serves.
func describeContainer(ctx context.Context, c RunningContainer, srv *Server, image string, port int, spec ContainerSpec) {
	if st, err := c.Inspect(ctx); err == nil {
		srv.ImageID = st.ImageID
		if st.CPUs != "" {
			srv.CPUs = st.CPUs + " (container cpuset)"
		}
		if st.Pid > 0 {
			srv.CPU = cpustat.NewTree(st.Pid, "container process tree (every process in the container)")
			srv.CPUGroup = cgroupNote(st.Pid)
		}
	}
	if srv.CPU == nil {
		srv.CPUWhyNot = "the engine did not say which process runs the container"
	}
	srv.Origin = fmt.Sprintf("docker container %s from image %s", shortContainerID(c.ID()), image)
	srv.Set(Served(drivers.Endpoint{User: spec.User, Password: spec.Password, Database: spec.Database}, "127.0.0.1:"+strconv.Itoa(port), filepath.Join(srv.SocketDir, spec.Socket)))
}

// desktopError says why provider cannot measure through Docker Desktop.
func desktopError(provider string, eng Engine) error {
	return setting.Err("%s provider: the engine is %s, which runs containers in a VM: a Unix socket in a bind mount cannot be reached from this host across the VM boundary (docker/for-mac#483), and TCP would cross Docker's port proxy. Use %s local with servers installed here; dbsock's %s container (a client in a container beside the servers) needs a Linux engine with host networking, and was built and tested only on one", provider, eng.OS, setting.Provider, setting.Client)
}

// usableEngine returns the engine when dbsock can measure through it.
func (d *Docker) usableEngine(ctx context.Context, target string) (Engine, error) {
	eng := d.engine(ctx)
	if !eng.Reachable {
		return eng, fmt.Errorf("%w %s: docker provider: %s", ErrCannotSupply, target, eng.Unusable())
	}
	if err := eng.CannotRun(DockerNeeds(), false); err != nil {
		return eng, err
	}
	home, owner := HomeOn(ctx, eng.Socket), OwnerOn(ctx, eng.Socket)
	if home != nil {
		if err := CheckHome(ctx, eng.Socket, DockerNeeds(), "host", d.Routes); err != nil {
			return eng, setting.Err("%w %s: docker provider: %v", ErrCannotSupply, target, err)
		}
	}
	d.omu.Lock()
	d.home, d.owner = home, owner
	d.omu.Unlock()
	d.local.setOwner(owner)
	return eng, nil
}

func (d *Docker) track(srv *Server, stop func(context.Context) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := srv.SocketDir
	d.stops[key] = stop
	srv.stop = func(ctx context.Context) error {
		d.mu.Lock()
		delete(d.stops, key)
		d.mu.Unlock()
		return stop(ctx)
	}
}

// Close implements Provider: it removes every container still running.
func (d *Docker) Close() error {
	d.mu.Lock()
	stops := d.stops
	d.stops = map[string]func(context.Context) error{}
	d.mu.Unlock()
	var errs []error
	for _, stop := range stops {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		errs = append(errs, stop(ctx))
		cancel()
	}
	return errors.Join(append(errs, d.removeNetwork(), d.local.Close())...)
}

// waitContainer probes the server from the host until both endpoints accept
// and the driver can log in.
func waitContainer(ctx context.Context, c RunningContainer, srv *Server, ready func(context.Context, *Server) error) error {
	gone := func() error {
		if st, err := c.Inspect(ctx); err == nil && !st.Running {
			return fmt.Errorf("%s container exited before it was ready (exit %d); its log says:\n%s", srv.Target, st.ExitCode, readLogs(c))
		}
		return nil
	}
	err := Poll(ctx, 3*time.Minute, ReadyProbe(srv, ready), gone)
	var late *NotReady
	if errors.As(err, &late) {
		return fmt.Errorf("%s container was not ready after 3 minutes (last probe: %v); its log says:\n%s", srv.Target, late.Last, readLogs(c))
	}
	return err
}

func shortContainerID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func engineKind(e Engine) string {
	switch {
	case e.Rootless:
		return "rootless Docker, whose host network is not this host's"
	case e.Desktop:
		return "Docker Desktop"
	}
	return e.OS
}

// imagePresent asks the engine whether ref is already on this machine.
func imagePresent(ctx context.Context, socket, ref string) bool {
	resp, err := DockerAPI(ctx, socket, http.MethodGet, "/images/"+url.PathEscape(ref)+"/json")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// ChooseImage picks target's image: override when given (it must be here or
// pullable), else the official image, else, when that cannot be had, the
// offline image "make images" built, with a note saying so.
func ChooseImage(ctx context.Context, socket string, t Target, override string) (image, note string, err error) {
	if err := engineReachable(ctx); err != nil {
		return "", "", err // not a question of images
	}
	if override != "" {
		if err := ensureImage(ctx, socket, override); err != nil {
			return "", "", fmt.Errorf("image %s is not on this machine and could not be pulled (%v)", override, err)
		}
		return override, "", nil
	}
	official, offline := t.Container.Image, t.Container.Offline
	perr := ensureImage(ctx, socket, official)
	if perr == nil {
		return official, "", nil
	}
	if imagePresent(ctx, socket, offline) {
		return offline, StandInNote(t.Container, firstLine(perr)), nil
	}
	return "", "", fmt.Errorf("image %s is not on this machine and could not be pulled (%v); without a registry, run make images (dbsock then uses %s)", official, firstLine(perr), offline)
}

// StandInNote is the warning of a run whose server came from c's Offline
// image because its official one could not be had (why): what ran, and
// how that image was built.
func StandInNote(c *Container, why string) string {
	built := c.OfflineBuilt
	if built == "" {
		built = "built from Debian's packages by make images"
	}
	return fmt.Sprintf("The official image %s is not here and could not be pulled (%s), so dbsock ran its stand-in %s, %s: the server is the product named above, not the official image's, and its numbers are that product's.",
		c.Image, why, c.Offline, built)
}

// StandInOrigin is the origin of a server from image, said so that the
// run's log, which names the origin as the server starts, says when it is
// dbsock's stand-in for target's official image.
func StandInOrigin(origin string, c *Container, image string) string {
	if c == nil || c.Offline == "" || image != c.Offline || image == c.Image {
		return origin
	}
	return origin + ", dbsock's stand-in for the official " + c.Image + ", which could not be had"
}

// engineReachable says why this process cannot use the Docker engine
// (nil when it can): a permission it lacks, or no engine there.
func engineReachable(ctx context.Context) error {
	if why := ProbeEngine(ctx, 10*time.Second).Unusable(); why != "" {
		return errors.New(why)
	}
	return nil
}

// ensureImage makes sure ref is on this machine, pulling it when it is not.
func ensureImage(ctx context.Context, socket, ref string) error {
	if imagePresent(ctx, socket, ref) {
		return nil
	}
	name, tag, ok := strings.Cut(ref, ":")
	if !ok || strings.Contains(tag, "/") {
		name, tag = ref, "latest"
	}
	resp, err := DockerAPI(ctx, socket, http.MethodPost, "/images/create?fromImage="+url.QueryEscape(name)+"&tag="+url.QueryEscape(tag))
	if err != nil {
		return err
	}
	if err := streamError(resp); err != nil {
		return err
	}
	if !imagePresent(ctx, socket, ref) {
		return errors.New("the pull ended without the image")
	}
	return nil
}

// streamError reads to its end an engine answer that streams JSON messages
// (a pull, a build) and closes it; a failure is a message with "error"
// (or, when the engine refuses at once, a "message").
func streamError(resp *http.Response) error {
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if err := dec.Decode(&msg); err != nil {
			break
		}
		if msg.Error != "" {
			return errors.New(strings.TrimSpace(msg.Error))
		}
		if resp.StatusCode != http.StatusOK && msg.Message != "" {
			return errors.New(msg.Message)
		}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the engine answered %s", resp.Status)
	}
	return nil
}

// DockerAPI sends one request to the engine's HTTP API on its Unix socket.
func DockerAPI(ctx context.Context, socket, method, path string) (*http.Response, error) {
	return dockerRequest(ctx, socket, method, path, nil, 30*time.Second)
}

// dockerRequest is DockerAPI with a body (a tar for /build) and a time limit.
func dockerRequest(ctx context.Context, socket, method, path string, body io.Reader, limit time.Duration) (*http.Response, error) {
	client := &http.Client{Timeout: limit, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}}}
	req, err := http.NewRequestWithContext(ctx, method, "http://docker"+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-tar")
	}
	return client.Do(req)
}

func ioReadFull(r io.Reader, b []byte) (int, error) {
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}
