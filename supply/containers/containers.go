// Package containers is the container runtime of dbsock's docker provider
// and client container, with testcontainers-go: importing it registers it
// with package supply.
//
//	import _ "github.com/dbsock/dbsock/supply/containers"
//
// It gives each container a logger that writes nothing (dbsock says what
// it does on its own log) and leaves testcontainers' process-wide settings
// alone; Quiet turns off its reaper and default logger for a program of
// its own, as the dbsock command does.
package containers

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	tc "github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnet "github.com/testcontainers/testcontainers-go/network"

	"github.com/dbsock/dbsock/supply"
)

func init() { supply.SetRuntime(runtime{}) }

// Quiet turns off, for the whole process, testcontainers' reaper, Ryuk (its
// image cannot be pulled without a registry, and dbsock removes its
// containers itself), unless TESTCONTAINERS_RYUK_DISABLED says otherwise,
// and its default logger. The dbsock command calls it first thing; a
// library leaves such settings to the program that imports it.
func Quiet() {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	tclog.SetDefault(quiet)
}

// quiet is the logger each of dbsock's containers gets.
var quiet = tclog.NewNoopLogger()

type runtime struct{}

// Run implements supply.Runtime.
func (runtime) Run(ctx context.Context, req supply.ContainerRequest) (supply.RunningContainer, error) {
	opts := []tc.ContainerCustomizer{
		tc.WithLogger(quiet),
		tc.WithCmd(req.Cmd...),
		tc.WithLabels(req.Labels),
		tc.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, req.Binds...)
			if req.HostNetwork {
				hc.NetworkMode = "host"
			} else if req.NetworkOf != "" {
				hc.NetworkMode = container.NetworkMode("container:" + req.NetworkOf)
			} else if req.Publish > 0 {
				hc.PortBindings = portBinding(req.Publish)
			}
			hc.CpusetCpus = req.CPUs
			hc.CapAdd = append(hc.CapAdd, req.CapAdd...)
			hc.CapDrop = append(hc.CapDrop, req.CapDrop...)
			if req.NoNewPrivileges {
				hc.SecurityOpt = append(hc.SecurityOpt, "no-new-privileges")
			}
			hc.ReadonlyRootfs = req.ReadOnly
		}),
	}
	var held *heldStdin
	if req.HoldStdin {
		held = &heldStdin{}
		opts = append(opts, held.options()...)
	}
	if len(req.Env) > 0 {
		opts = append(opts, tc.WithEnv(req.Env))
	}
	if req.User != "" {
		opts = append(opts, tc.WithConfigModifier(func(c *container.Config) { c.User = req.User }))
	}
	if len(req.Entrypoint) > 0 {
		opts = append(opts, tc.WithEntrypoint(req.Entrypoint...))
	}
	if !req.HostNetwork && req.Publish > 0 {
		opts = append(opts, tc.WithExposedPorts(strconv.Itoa(req.Publish)+"/tcp"))
	}
	if req.Network != nil {
		nw, ok := req.Network.(*net)
		if !ok {
			return nil, fmt.Errorf("network %s was not made by this runtime", req.Network.Name())
		}
		opts = append(opts, tcnet.WithNetwork(req.Aliases, nw.n))
	}
	c, err := tc.Run(ctx, req.Image, opts...)
	var out supply.RunningContainer
	if c != nil {
		out = &ctr{c: c, stdin: held}
	} else {
		held.close()
	}
	return out, ryukHint(err)
}

// ryukHint adds to err, when testcontainers' reaper could not start, what
// to do about it.
func ryukHint(err error) error {
	if err == nil || !strings.Contains(err.Error(), "reaper") {
		return err
	}
	return fmt.Errorf("%w (testcontainers' reaper, Ryuk, could not start: its image must be here or pullable; dbsock removes its own containers, so TESTCONTAINERS_RYUK_DISABLED=true in the environment lets it run without one)", err)
}

// portBinding publishes port on 127.0.0.1 only.
func portBinding(port int) network.PortMap {
	p := network.MustParsePort(strconv.Itoa(port) + "/tcp")
	return network.PortMap{p: []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}}}
}

// NewNetwork implements supply.Runtime: a bridge network with labels.
func (runtime) NewNetwork(ctx context.Context, labels map[string]string) (supply.Network, error) {
	n, err := tcnet.New(ctx, tcnet.WithDriver("bridge"), tcnet.WithLabels(labels))
	if err != nil {
		return nil, ryukHint(err)
	}
	return &net{n: n}, nil
}

type net struct{ n *tc.DockerNetwork }

func (n *net) Name() string                     { return n.n.Name }
func (n *net) Remove(ctx context.Context) error { return n.n.Remove(ctx) }

// ctr is a testcontainers container as a supply.RunningContainer; stdin,
// when set, is the first process's stdin this process holds
// (ContainerRequest.HoldStdin).
type ctr struct {
	c     tc.Container
	stdin *heldStdin
}

func (c *ctr) ID() string { return c.c.GetContainerID() }

func (c *ctr) Inspect(ctx context.Context) (supply.ContainerState, error) {
	insp, err := c.c.Inspect(ctx)
	if err != nil {
		return supply.ContainerState{}, err
	}
	st := supply.ContainerState{ImageID: insp.Image}
	if insp.State != nil {
		st.Running, st.ExitCode, st.Pid = insp.State.Running, insp.State.ExitCode, insp.State.Pid
	}
	if insp.HostConfig != nil {
		st.CPUs = insp.HostConfig.CpusetCpus
	}
	return st, nil
}

func (c *ctr) IP(ctx context.Context) (string, error) { return c.c.ContainerIP(ctx) }

func (c *ctr) Stop(ctx context.Context, timeout time.Duration) error {
	return c.c.Stop(ctx, &timeout)
}

func (c *ctr) Start(ctx context.Context) error { return c.c.Start(ctx) }

func (c *ctr) Logs(ctx context.Context) (io.ReadCloser, error) { return c.c.Logs(ctx) }

func (c *ctr) Exec(ctx context.Context, cmd []string) (int, io.Reader, error) {
	return execBounded(ctx, c.c.GetContainerID(), cmd)
}

func (c *ctr) Remove(ctx context.Context, timeout time.Duration) error {
	err := tc.TerminateContainer(c.c, tc.StopContext(ctx), tc.StopTimeout(timeout))
	c.stdin.close()
	return err
}
