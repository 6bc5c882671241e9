package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/supply"
)

// The published, bridge, service and pod paths with the compose provider:
// a second compose project of the run, from compose.yaml itself, where
// each server's service runs again in the network namespace of an idle
// holder service on the project's network, as the containers of a
// Kubernetes pod share their pause container's. The holder is on the
// network under the target's name and publishes the server's port on
// 127.0.0.1; the service "app" idles on the same network, and the
// service path dials from inside its namespace, as a compose application
// reaches its database by name. The servers there listen on 0.0.0.0 (of
// their own namespace) and keep their sockets in a directory of their own.

// podsFile is the override compose.yaml runs with in the second project.
const podsFile = "pods.yaml"

// appService is the idle service the service path dials from.
const appService = "app"

// podOf is the holder service of target's server.
func podOf(target string) string { return target + "-pod" }

// routesProject is the second project, made on first use.
func (c *Compose) routesProject() (*Compose, error) {
	if c.net != nil {
		return c.net, nil
	}
	n := &Compose{Services: c.Services, Images: c.Images, Keep: c.Keep, ServerCPUs: c.ServerCPUs, twin: true,
		serviceValues: c.serviceValues, cpuset: map[string]string{}, hostPorts: map[string]int{}}
	n.dir = filepath.Join(c.dir, "net")
	if err := os.Mkdir(n.dir, 0o700); err != nil {
		return nil, err
	}
	n.project = c.project + "-net"
	n.command = append(slices.Clone(c.compose), "-f", filepath.Join(c.dir, "compose.yaml"), "-f", filepath.Join(n.dir, podsFile), "-p", n.project)
	n.env = append(slices.Clone(c.env), "DBSOCK_SOCKET_DIR="+n.dir, "DBSOCK_BIND=0.0.0.0", "DBSOCK_BIND_SPACED=0.0.0.0")
	c.net = n
	return n, nil
}

// addRoutes starts target's second server (the pod), and gives srv the
// published, bridge, service and pod paths to it.
func (c *Compose) addRoutes(ctx context.Context, t supply.Target, image string, srv *supply.Server) error {
	n, err := c.routesProject()
	if err != nil {
		return err
	}
	sockDir := filepath.Join(n.dir, t.Name)
	if err := os.Mkdir(sockDir, 0o777); err != nil {
		return err
	}
	if err := os.Chmod(sockDir, 0o777); err != nil {
		return err
	}
	if n.hostPorts[t.Name], err = supply.FreePort4(); err != nil {
		return err
	}
	n.pods = append(n.pods, pod{target: t.Name, image: image})
	if err := n.writePods(c.Service); err != nil {
		return err
	}
	twin, err := n.Supply(ctx, t) // the holder starts first: the server's network_mode names it
	if err != nil {
		return fmt.Errorf("%s's second server, for the paths off the host network: %w", t.Name, err)
	}
	holder, err := n.address(ctx, podOf(t.Name))
	if err != nil {
		return errors.Join(err, twin.Stop(context.Background()))
	}
	routes := supply.Twin{TCP: twin.TCP(), IP: holder.ip, Port: c.ports[t.Name], PID: holder.pid}
	service := ""
	if c.Service {
		if err := n.run(ctx, "up", "-d", appService); err != nil {
			return errors.Join(fmt.Errorf("start compose service %s of project %s, which the service path dials from: %w", appService, n.project, err), twin.Stop(context.Background()))
		}
		app, err := n.address(ctx, appService)
		if err != nil {
			return errors.Join(err, twin.Stop(context.Background()))
		}
		routes.From = &supply.Neighbour{IP: app.ip, PID: app.pid}
		service = fmt.Sprintf("; the service path dials %s:%d from inside the network namespace of service %s (at %s), as a compose application reaches its database by name", t.Name, routes.Port, appService, app.ip)
	}
	srv.Set(routes.Routes()...)
	srv.SeedAlso = append(srv.SeedAlso, twin.TCP())
	srv.Warnings = append(srv.Warnings, fmt.Sprintf("The published, bridge, service and pod paths reach a second %s server, compose.yaml's service run again in compose project %s, in the network namespace of its holder service %s on the project's network (as a pod's containers share one), listening on 0.0.0.0 there: the holder publishes its port on 127.0.0.1 (host port %d) through %s; the bridge path dials the holder's address %s from the host%s; the pod path dials 127.0.0.1 from inside the holder's namespace.",
		t.Name, n.project, podOf(t.Name), n.hostPorts[t.Name], supply.PublishMechanism(n.hostPorts[t.Name]), holder.ip, service))
	srv.Join(twin)
	return nil
}

// A pod is a target's server in the second project: its holder's image.
type pod struct{ target, image string }

// writePods writes the second project's override: each server's service
// in its holder's network namespace, the holders on the project network
// under the targets' names, publishing their ports on 127.0.0.1, and the
// idle app service when the service path is measured.
func (c *Compose) writePods(app bool) error {
	var b strings.Builder
	labels := fmt.Sprintf("%s: \"1\", %s: %q, %s: %q", supply.Label, supply.PIDLabel, strconv.Itoa(os.Getpid()), supply.OwnerLabel, supply.Self().String())
	idle := func(name, image string) {
		fmt.Fprintf(&b, "  %s:\n    image: %q\n    entrypoint: [\"sleep\"]\n    command: [\"86400\"]\n    stop_signal: SIGKILL\n    labels: {%s, %s.target: %q}\n", name, image, labels, supply.Label, name)
		if cpus := placement.FormatList(c.ServerCPUs); cpus != "" {
			fmt.Fprintf(&b, "    cpuset: %q\n", cpus)
		}
	}
	b.WriteString("# Written by dbsock for one run: compose.yaml's servers in pods (see compose/composeroutes.go).\nservices:\n")
	for _, p := range c.pods {
		fmt.Fprintf(&b, "  %s:\n    network_mode: \"service:%s\"\n", p.target, podOf(p.target))
		idle(podOf(p.target), p.image)
		fmt.Fprintf(&b, "    ports: [\"127.0.0.1:%d:%d\"]\n    networks:\n      dbsock:\n        aliases: [%q]\n", c.hostPorts[p.target], c.ports[p.target], p.target)
	}
	if app && len(c.pods) > 0 {
		idle(appService, c.pods[0].image)
		b.WriteString("    networks: [dbsock]\n")
	}
	fmt.Fprintf(&b, "networks:\n  dbsock:\n    labels: {%s}\n", labels)
	return os.WriteFile(filepath.Join(c.dir, podsFile), []byte(b.String()), 0o644)
}

// addr is a container's address on the project network and its first
// process (whose network namespace is the container's).
type addr struct {
	ip  string
	pid int
}

// address reads the service's container: its address on the project's
// network and its first process.
func (c *Compose) address(ctx context.Context, service string) (addr, error) {
	s, ok := c.container(ctx, service)
	if !ok {
		return addr{}, fmt.Errorf("compose service %s of project %s: the engine does not know its container", service, c.project)
	}
	resp, err := supply.DockerAPI(ctx, supply.DockerSocket(), http.MethodGet, "/containers/"+s.ID+"/json")
	if err != nil {
		return addr{}, fmt.Errorf("inspect compose service %s of project %s: %w", service, c.project, err)
	}
	defer resp.Body.Close()
	var insp struct {
		State           struct{ Pid int }
		NetworkSettings struct {
			Networks map[string]struct{ IPAddress string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&insp); err != nil {
		return addr{}, fmt.Errorf("inspect compose service %s of project %s: %w", service, c.project, err)
	}
	a := addr{pid: insp.State.Pid}
	for _, nw := range insp.NetworkSettings.Networks {
		a.ip = nw.IPAddress
	}
	if a.ip == "" || a.pid <= 0 {
		return addr{}, fmt.Errorf("compose service %s of project %s: the engine gives no address on the project's network or no process (%q, pid %d)", service, c.project, a.ip, a.pid)
	}
	return a, nil
}
