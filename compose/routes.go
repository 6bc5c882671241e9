package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	tc "github.com/testcontainers/testcontainers-go"
	tcnet "github.com/testcontainers/testcontainers-go/network"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
)

// The published and bridge paths: how applications in containers reach a
// server when it is not on the host network. A container is on the host
// network or on a bridge network, never both, so the docker provider
// starts a second container of the same image, configured and pinned
// alike, on a bridge network it creates for the run, its port published
// on 127.0.0.1: published is that port (through docker-proxy, or NAT
// rules where the engine runs without it), bridge the container's own
// address on the network.

// runNetwork is the run's bridge network, created on first use.
func (d *Docker) runNetwork(ctx context.Context) (*tc.DockerNetwork, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.network != nil {
		return d.network, nil
	}
	nw, err := tcnet.New(ctx, tcnet.WithDriver("bridge"), tcnet.WithLabels(map[string]string{
		Label: "1", RunLabel: d.runID, PIDLabel: strconv.Itoa(os.Getpid()), OwnerLabel: Self().String()}))
	if err != nil {
		return nil, fmt.Errorf("create a bridge network for the published and bridge paths: %w", err)
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
		return fmt.Errorf("remove the run's network %s: %w", nw.Name, err)
	}
	return nil
}

// routes gives srv the published and bridge paths when asked for and
// possible, or says why not in srv.NoRoutes.
func (d *Docker) routes(ctx context.Context, t Target, image string, srv *Server, hostNet bool) error {
	switch {
	case !d.Routes:
		srv.NoRoutes = "they were not asked for"
	case !hostNet:
		srv.NoRoutes = "host networking is not available here, so its one container is already behind a published port"
	default:
		return d.addRoutes(ctx, t, image, srv)
	}
	return nil
}

// addRoutes starts srv's twin on the run's network (image, pinned as srv)
// and gives srv the published and bridge paths to it; where it cannot, it
// says why in srv.NoRoutes and leaves srv as it was.
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
	twin := &Server{Target: t.Name, Provenance: drivers.Provenance{SocketDir: dir}}
	c, err := d.startContainer(ctx, image, port, spec, twin, append(d.containerOptions(t.Name, dir, port, false, spec), tcnet.WithNetwork([]string{t.Name}, nw))...)
	if err != nil {
		return err
	}
	ip, err := c.ContainerIP(ctx)
	if err != nil || ip == "" {
		return errors.Join(fmt.Errorf("%s: the engine gave no address of its container on the run's network: %v", t.Name, err), twin.Stop(context.Background()))
	}
	config := takeConfig(dir, spec)
	twin.restart = func(ctx context.Context) error { return restartContainer(ctx, c, twin, spec, config) }
	srv.Published, srv.Bridge = twin.TCP, twin.TCP
	srv.Published.Transport = drivers.Published
	srv.Bridge.Transport, srv.Bridge.Address = drivers.Bridge, ip+":"+strconv.Itoa(port)
	srv.SeedAlso = append(srv.SeedAlso, twin.TCP)
	srv.Warnings = append(srv.Warnings, fmt.Sprintf("The published and bridge paths reach a second %s container from the same image, configured and pinned alike, on the run's bridge network %s (a container is on the host network or on a bridge, never both); its port %d is published on 127.0.0.1 through %s.",
		t.Name, nw.Name, port, publishMechanism(port)))
	srv.Join(twin)
	return nil
}

// publishMechanism says what serves a port Docker publishes on 127.0.0.1:
// docker-proxy, the engine's userland proxy (with its pid), or, where no
// process listens on it, the engine's NAT rules.
func publishMechanism(port int) string {
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
