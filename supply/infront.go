package supply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/setting"
)

// A hop in a container of its own (Container.Behind) stands in front of a
// server in another: the docker provider starts the server from its own
// image first, then the hop's image on the same loopback (both on the
// host's network, or both in the network namespace of the container
// dbsock runs in), the server's socket directory bind-mounted into the
// hop's at BehindDir, both pinned alike. The hop's own sockets are in its
// own socket directory, as every container's are. One image of the hop
// stands in front of every server it serves.

// supplyInFront supplies hop target t: the server behind it, then the
// hop's container in front of it, as one Server.
func (d *Docker) supplyInFront(ctx context.Context, t Target) (*Server, error) {
	eng, err := d.usableEngine(ctx, t.Name)
	if err != nil {
		return nil, err
	}
	if _, err := containerRuntime(); err != nil {
		return nil, fmt.Errorf("%w %s: docker provider: %v", ErrCannotSupply, t.Name, err)
	}
	if !eng.HostNetwork && !d.joined() {
		return nil, setting.Err("%w %s: docker provider: its hop's container reaches the server's container over their shared loopback, which needs host networking, not available here (%s); use %s local",
			ErrCannotSupply, t.Name, engineKind(eng), setting.Provider)
	}
	image, note, err := ChooseImage(ctx, eng.Socket, t, d.Images[t.Name])
	if err != nil {
		return nil, fmt.Errorf("%w %s: docker provider: %v", ErrCannotSupply, t.Name, err)
	}
	behind, err := d.Supply(ctx, *t.Container.Behind)
	if err != nil {
		return nil, err
	}
	hop, err := d.startInFront(ctx, t, image, behind)
	if err != nil {
		return nil, errors.Join(err, behind.Stop(context.Background()))
	}
	if note != "" {
		hop.Warnings = append(hop.Warnings, note)
	}
	return hop, nil
}

// startInFront starts t's hop container from image in front of behind,
// and returns the two as one Server: the hop's endpoints (its spec's
// HopPaths, with behind's account), stopped and restarted together, the
// hop's own CPU apart.
func (d *Docker) startInFront(ctx context.Context, t Target, image string, behind *Server) (*Server, error) {
	dir, port, err := d.socketDirAndPort(t.Name)
	if err != nil {
		return nil, err
	}
	spec, err := t.Container.Spec(SpecFor{Port: port, Dir: dir, Bind: "127.0.0.1", Behind: behindPair(behind)})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	hop := &Server{Target: t.Name, Provenance: drivers.Provenance{Provider: d.Name(), Image: image, SocketDir: dir, NetworkMode: d.networkMode()}}
	req := d.containerRequest(image, t.Name, dir, port, true, spec)
	req.Binds = append(req.Binds, behind.SocketDir+":"+BehindDir) // behind's SocketDir is the host's
	c, err := d.startContainer(ctx, port, spec, hop, req)
	if err != nil {
		return nil, err
	}
	hop.Origin = StandInOrigin(hop.Origin, t.Container, image) + " in front of " + behind.Origin
	if st, err := c.Inspect(ctx); err == nil && d.hostPIDs() {
		hop.RunsAs = RunsAs(st.Pid)
	}
	account := behind.TCP() // the account, as the server's own clients have it
	hop.Set(Served(account, hop.TCP().Address, hop.Unix().Address))
	hop.Set(hopEndpoints(dir, spec.HopPaths, account)...)
	OfferLoopbacks(ctx, hop, false, "a hop's container listens on 127.0.0.1 and its sockets only")
	offerTLS(hop, errors.New("a hop's container serves no TLS"), 0, "")
	hop.SetAbsent(errors.New("a hop's container stands in front of its server on the host's loopback, not behind a published port"), drivers.DockerPaths()...)
	config := takeConfig(dir, spec)
	tree, _ := hop.CPU.(*cpustat.Tree)
	hop.restart = func(ctx context.Context) error { return restartContainer(ctx, c, hop, dir, spec, config, tree) }
	own := hop.CPU // the hop's container alone
	hop = hop.Join(behind)
	if hop.CPU != nil {
		hop.HopCPU = own
	}
	hop.Warnings = append(hop.Warnings, behind.Warnings...)
	if t.Container.Hops != nil {
		t.Container.Hops(hop)
	}
	hop.SocketDir = d.hostPath(dir) // the report's: the host's directory
	return hop, nil
}

// behindPair is srv's endpoints as a hop's container reaches them: its
// TCP address on the shared loopback, its socket under BehindDir.
func behindPair(srv *Server) drivers.Pair {
	return drivers.Pair{
		TCP:  drivers.Endpoint{Transport: drivers.TCP, Address: srv.TCP().Address},
		Unix: drivers.Endpoint{Transport: drivers.Unix, Address: path.Join(BehindDir, filepath.Base(srv.Unix().Address))},
	}
}

// hopEndpoints are paths with account's user, password and database, a
// socket's file name made a path in dir.
func hopEndpoints(dir string, paths []drivers.Endpoint, account drivers.Endpoint) []drivers.Endpoint {
	eps := make([]drivers.Endpoint, 0, len(paths))
	for _, p := range paths {
		ep := account
		ep.Transport, ep.Address, ep.Hop = p.Transport, p.Address, p.Hop
		if p.Transport.Network() == "unix" {
			ep.Address = filepath.Join(dir, p.Address)
		}
		eps = append(eps, ep)
	}
	return eps
}
