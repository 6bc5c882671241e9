package supply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
)

// The published, bridge, service and pod paths: how applications reach a
// server in a container that is not on the host network. A container is
// on the host network or on a bridge network, never both, so the docker
// provider
// starts a second container of the same image, configured and pinned
// alike, on a bridge network it creates for the run, its port published
// on 127.0.0.1: published is that port (through docker-proxy, or NAT
// rules where the engine runs without it), bridge the container's own
// address on the network.

// runNetwork is the run's bridge network, created on first use: the one
// network its containers off the host network are on.
func (d *Docker) runNetwork(ctx context.Context) (Network, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.network != nil {
		return d.network, nil
	}
	rt, err := containerRuntime()
	if err != nil {
		return nil, err
	}
	_ = watchOwner(DockerSocket()) // the reaper watches from before the run's first network
	nw, err := rt.NewNetwork(ctx, map[string]string{
		Label: "1", RunLabel: d.runID, PIDLabel: strconv.Itoa(os.Getpid()), OwnerLabel: d.ownerLabel()})
	if err != nil {
		return nil, fmt.Errorf("create the run's own bridge network (for the containers off the host network): %w", err)
	}
	d.network = nw
	return nw, nil
}

// removeNetwork removes the run's network once its containers are gone.
func (d *Docker) removeNetwork() error {
	d.mu.Lock()
	nw := d.network
	d.network = nil
	d.mu.Unlock()
	if nw == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := nw.Remove(ctx); err != nil {
		return fmt.Errorf("remove the run's network %s: %w", nw.Name(), err)
	}
	return nil
}

// routes gives srv the published, bridge, service and pod paths when
// asked for and possible, or says why not.
func (d *Docker) routes(ctx context.Context, t Target, image string, srv *Server, hostNet bool) error {
	switch {
	case !d.Routes:
		srv.SetAbsent(errors.New("they were not asked for"), drivers.DockerPaths()...)
	case !hostNet:
		srv.SetAbsent(errors.New("host networking is not available here, so its one container is already behind a published port"), drivers.DockerPaths()...)
	default:
		return d.addRoutes(ctx, t, image, srv)
	}
	return nil
}

// addRoutes starts srv's twin on the run's network (image, pinned as srv)
// and gives srv the published, bridge, service and pod paths to it.
func (d *Docker) addRoutes(ctx context.Context, t Target, image string, srv *Server) error {
	nw, err := d.runNetwork(ctx)
	if err != nil {
		return err
	}
	dir, port, err := d.socketDirAndPort(t.Name)
	if err != nil {
		return err
	}
	spec, err := t.Container.Spec(SpecFor{Port: port, Dir: dir, Bind: "0.0.0.0"})
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	spec.Ready = Rotating(t.Container.Rotate, spec.Secrets, spec.Ready) // the twin's accounts too
	twin := &Server{Target: t.Name, Provenance: drivers.Provenance{SocketDir: dir}}
	req := d.containerRequest(image, t.Name, dir, port, false, spec)
	req.Network, req.Aliases = nw, []string{t.Name}
	c, err := d.startContainer(ctx, port, spec, twin, req)
	if err != nil {
		return err
	}
	ip, pid, err := containerAddr(ctx, c)
	if err != nil {
		return errors.Join(fmt.Errorf("%s: %w", t.Name, err), twin.Stop(context.Background()))
	}
	nb := &neighbourContainer{}
	if d.Service {
		if nb, err = d.neighbour(ctx, image); err != nil {
			return errors.Join(err, twin.Stop(context.Background()))
		}
	}
	config := takeConfig(dir, spec)
	at := func(ip string, pid int) {
		t := Twin{TCP: twin.TCP(), IP: ip, Port: port, PID: pid}
		if d.Service {
			t.From = &Neighbour{IP: nb.ip, PID: nb.pid}
		}
		srv.Set(t.Routes()...)
	}
	at(ip, pid)
	tree, _ := twin.CPU.(*cpustat.Tree)
	twin.restart = func(ctx context.Context) error {
		if err := restartContainer(ctx, c, twin, dir, spec, config, tree); err != nil {
			return err
		}
		ip, pid, err := containerAddr(ctx, c)
		if err != nil {
			return fmt.Errorf("restart %s container: %w", t.Name, err)
		}
		at(ip, pid) // a restarted container has a namespace of its own, perhaps another address
		return nil
	}
	srv.SeedAlso = append(srv.SeedAlso, twin.TCP())
	service := ""
	if d.Service {
		service = fmt.Sprintf("; the service path dials that address from inside the network namespace of dbsock's idle container %s on the network (at %s), as a compose application reaches its database by name", nb.name, nb.ip)
	}
	srv.Warnings = append(srv.Warnings, fmt.Sprintf("The published, bridge, service and pod paths reach a second %s container from the same image, configured and pinned alike, on the run's bridge network %s (a container is on the host network or on a bridge, never both): its port %d is published on 127.0.0.1 through %s; the bridge path dials its address on the network from the host%s; the pod path dials its 127.0.0.1 from inside its own network namespace, as a sidecar of the same pod does.",
		t.Name, nw.Name(), port, PublishMechanism(port), service))
	srv.Join(twin)
	return nil
}

// A Twin is a server's second instance, in a container on a bridge
// network (the docker provider's run network, or the network of the
// compose provider's second project): the published, bridge, service and
// pod paths reach it, made here for both providers.
type Twin struct {
	// TCP is its endpoint at the port published on 127.0.0.1.
	TCP drivers.Endpoint
	// IP is its address on the network, and Port the port it listens on
	// there and on its own 127.0.0.1.
	IP   string
	Port int
	// PID is a process in its network namespace.
	PID int
	// From, when set, is the idle container the service path dials from
	// (nil: the service path is not measured).
	From *Neighbour
}

// A Neighbour is a container on the same network as a Twin: its address
// there and a process in its network namespace.
type Neighbour struct {
	IP  string
	PID int
}

// Routes are the paths to t: published (its TCP endpoint), bridge (its
// address on the network, from the host), service (that address, from
// inside From's network namespace) and pod (its 127.0.0.1, from inside its
// own network namespace).
func (t Twin) Routes() []drivers.Endpoint {
	port := strconv.Itoa(t.Port)
	published, bridge, pod := t.TCP, t.TCP, t.TCP
	published.Transport = drivers.Published
	bridge.Transport, bridge.Address = drivers.Bridge, net.JoinHostPort(t.IP, port)
	pod.Transport, pod.Address, pod.Netns = drivers.Pod, "127.0.0.1:"+port, NetnsOf(t.PID)
	r := []drivers.Endpoint{published, bridge, pod}
	if t.From != nil {
		service := bridge
		service.Transport, service.Netns, service.From = drivers.Service, NetnsOf(t.From.PID), t.From.IP
		r = append(r, service)
	}
	return r
}

// containerAddr is c's address on the run's network and its first
// process (whose network namespace is the container's).
func containerAddr(ctx context.Context, c RunningContainer) (string, int, error) {
	ip, err := c.IP(ctx)
	if err != nil || ip == "" {
		return "", 0, fmt.Errorf("the engine gave no address of its container on the run's network: %v", err)
	}
	st, err := c.Inspect(ctx)
	if err != nil || st.Pid <= 0 {
		return "", 0, fmt.Errorf("the engine did not say which process runs its container on the run's network: %v", err)
	}
	return ip, st.Pid, nil
}

// NetnsOf is the network namespace of process pid.
func NetnsOf(pid int) string { return fmt.Sprintf("/proc/%d/ns/net", pid) }

// A neighbourContainer idles on the run's network: the service path's
// clients dial from inside its network namespace, as an application
// container of the same compose project would.
type neighbourContainer struct {
	name, ip string
	pid      int
}

// neighbour starts the run's idle container on its network (once, from
// image: any of the servers' images has a sleep), removed with the run.
func (d *Docker) neighbour(ctx context.Context, image string) (*neighbourContainer, error) {
	d.nbMu.Lock()
	defer d.nbMu.Unlock()
	if d.nb != nil {
		return d.nb, nil
	}
	nw, err := d.runNetwork(ctx)
	if err != nil {
		return nil, err
	}
	c, err := runContainer(ctx, ContainerRequest{Image: image, Entrypoint: []string{"sleep"}, Cmd: []string{"86400"},
		Labels: d.labels("service-path-client"), Network: nw, Aliases: []string{"app"}})
	stop := func(ctx context.Context) error {
		if c == nil {
			return nil
		}
		return c.Remove(ctx, 0)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start the idle container the service path dials from (image %s): %w", image, err), stop(context.Background()))
	}
	d.mu.Lock()
	d.stops["service-path-client"] = stop
	d.mu.Unlock()
	ip, pid, err := containerAddr(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("the idle container the service path dials from: %w", err)
	}
	name := shortContainerID(c.ID())
	d.nb = &neighbourContainer{name: name, ip: ip, pid: pid}
	return d.nb, nil
}

// PublishMechanism says what serves a port Docker publishes on 127.0.0.1:
// docker-proxy, the engine's userland proxy (with its pid), or, where no
// process listens on it, the engine's NAT rules.
func PublishMechanism(port int) string {
	pid, err := cpustat.ListeningPID(port)
	if err != nil {
		return "the engine's NAT rules (no process of this host listens on the port)"
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	name := strings.TrimSpace(string(comm))
	if name == "" {
		name = "a process"
	}
	return fmt.Sprintf("%s (pid %d), Docker's userland proxy", name, pid)
}
