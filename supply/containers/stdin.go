package containers

import (
	"context"
	"fmt"
	"sync"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	tc "github.com/testcontainers/testcontainers-go"
)

// heldStdin is a container's stdin that this process holds: the container
// is created with its stdin open and closed once its one attached client
// goes (StdinOnce), and this process attaches before the container starts
// and keeps the connection. When this process ends, however it ends, the
// kernel closes the connection, and the engine closes the first process's
// stdin: it reads EOF (supply.ContainerRequest.HoldStdin).
type heldStdin struct {
	mu   sync.Mutex
	conn client.HijackedResponse
	held bool
}

// options are the container's settings and the hook that attaches to its
// stdin once it is created, before it starts.
func (h *heldStdin) options() []tc.ContainerCustomizer {
	return []tc.ContainerCustomizer{
		tc.WithConfigModifier(func(c *container.Config) {
			c.OpenStdin, c.StdinOnce, c.AttachStdin = true, true, true
		}),
		tc.WithLifecycleHooks(tc.ContainerLifecycleHooks{PreStarts: []tc.ContainerHook{h.attach}}),
	}
}

// attach attaches this process to the created container's stdin.
func (h *heldStdin) attach(ctx context.Context, c tc.Container) error {
	cli, err := tc.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("connect to the Docker engine to hold the stdin of container %s: %w", shortID(c.GetContainerID()), err)
	}
	defer cli.Close()
	conn, err := cli.ContainerAttach(ctx, c.GetContainerID(), client.ContainerAttachOptions{Stream: true, Stdin: true})
	if err != nil {
		return fmt.Errorf("hold the stdin of container %s: %w", shortID(c.GetContainerID()), err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn, h.held = conn.HijackedResponse, true
	return nil
}

// close lets go of the stdin: the first process reads EOF.
func (h *heldStdin) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		h.conn.Close()
		h.held = false
	}
}
