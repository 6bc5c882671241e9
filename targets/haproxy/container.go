package haproxy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// HAProxy in a container of its own, one image in front of every server:
// the docker provider starts the server behind it from that server's own
// image, then dbsock/haproxy on the same loopback, the server's socket
// directory mounted at /behind (supply.Container.Behind). Its
// configuration is the local one's with the container's paths: the
// frontends on 127.0.0.1 and in /sock (its socket directory, bind-mounted
// from the host), backend tcp at the server's 127.0.0.1 port, backend
// unix at its socket under /behind, and the stats socket in /sock, which
// dbsock reads from the host. The image (make images, from Debian's
// package) runs HAProxy as the haproxy user; where dbsock is not root,
// as dbsock's own user, so that its sockets (mode 0600) are dbsock's.

// Image is dbsock's image of HAProxy, built from Debian's package by make
// images (entrypoint.sh beside this file is its entrypoint).
const Image = "dbsock/haproxy:2.6"

const (
	containerDir = "/sock"       // HAProxy's socket directory in its container
	configFile   = "haproxy.cfg" // in it, written by dbsock
	statsFile    = "stats.sock"  // in it, HAProxy's stats socket
)

// container is HAProxy's container in front of in's server, its backends
// tcp and unix at the endpoints tcp and unix pick (nil when in's server
// has no image).
func container(in *targets.Target, tcp, unix leg) *supply.Container {
	if in.Container == nil {
		return nil
	}
	behind := in.Supply()
	return &supply.Container{Image: Image, Offline: Image, Behind: &behind,
		Spec: containerSpec(tcp, unix), Hops: containerHops(productOf(in))}
}

// containerSpec writes HAProxy's configuration into the socket directory
// and returns its container's spec: the four frontends, tcp at the
// provider's port and unix at unix.sock, each path's endpoint with its
// hop's leg.
func containerSpec(tcp, unix leg) func(supply.SpecFor) (supply.ContainerSpec, error) {
	return func(sf supply.SpecFor) (supply.ContainerSpec, error) {
		if sf.Behind.TCP.Address == "" || sf.Behind.Unix.Address == "" {
			return supply.ContainerSpec{}, errors.New("haproxy: its container stands in front of another's server, and the docker provider names that server's endpoints (supply.Container.Behind): start it with the docker provider")
		}
		hopPort, err := supply.FreePort4()
		if err != nil {
			return supply.ContainerSpec{}, fmt.Errorf("haproxy: find a free port on 127.0.0.1 for its %s frontend: %w", drivers.TCPHopTCP, err)
		}
		eps := []drivers.Endpoint{
			{Transport: drivers.TCPHopTCP, Address: "127.0.0.1:" + strconv.Itoa(hopPort)},
			{Transport: drivers.UnixHopTCP, Address: string(drivers.UnixHopTCP) + ".sock"},
			{Transport: drivers.TCP, Address: "127.0.0.1:" + strconv.Itoa(sf.Port)},
			{Transport: drivers.Unix, Address: string(drivers.Unix) + ".sock"},
		}
		fronts := make([]frontend, 0, len(eps))
		for i, ep := range eps {
			eps[i].Hop = hopOf(ep.Transport)
			bind := ep.Address
			if ep.Transport.Network() == "unix" {
				bind = path.Join(containerDir, ep.Address)
			}
			fronts = append(fronts, frontend{ep.Transport, bind})
		}
		cfg, err := config(layout{frontends: fronts, tcp: tcp(sf.Behind).Address, unix: unix(sf.Behind).Address, stats: path.Join(containerDir, statsFile)})
		if err != nil {
			return supply.ContainerSpec{}, err
		}
		file := filepath.Join(sf.Dir, configFile)
		// No password in it (TCP mode): readable by HAProxy's user.
		if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
			return supply.ContainerSpec{}, fmt.Errorf("haproxy: write its container's configuration %s: %w", file, err)
		}
		return supply.ContainerSpec{
			Cmd:    []string{binary, "-f", path.Join(containerDir, configFile)},
			Socket: eps[3].Address, RunAs: containerUser(), HopPaths: eps,
		}, nil
	}
}

// containerUser is who HAProxy's container runs as: dbsock's own user
// where dbsock is not root, so that HAProxy's sockets (mode 0600) are its;
// else the image's haproxy user.
func containerUser() string {
	if os.Geteuid() == 0 {
		return ""
	}
	return strconv.Itoa(os.Geteuid()) + ":" + strconv.Itoa(os.Getegid())
}

// containerHops records the stats socket of the HAProxy container srv
// is, under each of its frontends' addresses, and says what serves them.
func containerHops(product string) func(*supply.Server) {
	return func(srv *supply.Server) {
		sock := filepath.Join(srv.SocketDir, statsFile)
		for _, p := range []drivers.Transport{drivers.TCPHopTCP, drivers.UnixHopTCP, drivers.TCP, drivers.Unix} {
			if ep, err := srv.Path(p); err == nil {
				stats.Store(ep.Address, sock)
			}
		}
		srv.Serving = "HAProxy in TCP mode in front of " + product + ", each in a container of its own (both started by dbsock, pinned alike)"
	}
}
