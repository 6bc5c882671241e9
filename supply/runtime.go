package supply

// The container runtime: how the docker provider and dbsock's client
// container start, stop, inspect and remove containers. Package
// supply/containers provides it with testcontainers-go and registers it
// when imported; the dbsock command imports it. A program that uses only
// local processes (a library user's test) need not compile testcontainers
// and the Docker client at all.

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// ContainerRequest is one container to run.
type ContainerRequest struct {
	Image      string
	Entrypoint []string // the image's own when empty
	Cmd        []string
	Env        map[string]string
	Labels     map[string]string
	Binds      []string // host:container
	// HostNetwork puts the container on the host's network; otherwise
	// Publish, when set, is a TCP port published on 127.0.0.1 only.
	HostNetwork bool
	Publish     int
	// NetworkOf, when set, is a container whose network namespace this
	// one joins (network mode container:ID).
	NetworkOf string
	// User is who the container's processes run as ("uid:gid"; "" the
	// image's user).
	User   string
	CPUs   string // the cpuset, e.g. "0" or "0-1"; "" unpinned
	CapAdd []string
	// CapDrop are capabilities taken from the engine's default set ("ALL":
	// every one, before CapAdd adds some back).
	CapDrop []string
	// NoNewPrivileges keeps the container's processes from gaining
	// privileges (a setuid binary, file capabilities).
	NoNewPrivileges bool
	// ReadOnly mounts the container's root filesystem read-only.
	ReadOnly bool
	// HoldStdin gives the container's first process a stdin that this
	// process holds, attached before it starts: it reads EOF when this
	// process ends, however it ends (RunningContainer.Remove closes it
	// too).
	HoldStdin bool
	// Network, when set, is a network of the run's the container joins
	// under Aliases.
	Network Network
	Aliases []string
}

// ContainerState is what the engine says of a running container.
type ContainerState struct {
	Running  bool
	ExitCode int
	Pid      int    // its first process as the host sees it (0: none)
	ImageID  string // the image's ID
	CPUs     string // its cpuset ("" unpinned)
}

// RunningContainer is a container the runtime started.
type RunningContainer interface {
	// ID is the engine's ID of the container.
	ID() string
	// Inspect asks the engine for the container's state.
	Inspect(ctx context.Context) (ContainerState, error)
	// IP is the container's address on the network it joined.
	IP(ctx context.Context) (string, error)
	// Stop stops it, waiting at most timeout before killing it; Start
	// starts it again.
	Stop(ctx context.Context, timeout time.Duration) error
	Start(ctx context.Context) error
	// Logs is what the container wrote.
	Logs(ctx context.Context) (io.ReadCloser, error)
	// Exec runs cmd in the container and returns its exit status and
	// output.
	Exec(ctx context.Context, cmd []string) (int, io.Reader, error)
	// Remove stops the container (at most timeout) and removes it.
	Remove(ctx context.Context, timeout time.Duration) error
}

// Network is a bridge network a run created.
type Network interface {
	Name() string
	Remove(ctx context.Context) error
}

// Runtime starts containers and networks.
type Runtime interface {
	Run(ctx context.Context, req ContainerRequest) (RunningContainer, error)
	NewNetwork(ctx context.Context, labels map[string]string) (Network, error)
}

var (
	runtimeMu  sync.Mutex
	registered Runtime
)

// SetRuntime makes rt the runtime of the docker provider and the client
// container (package supply/containers calls it when imported).
func SetRuntime(rt Runtime) {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	registered = rt
}

// errNoRuntime: no container runtime was compiled in.
var errNoRuntime = errors.New(`no container runtime is compiled into this program: import _ "github.com/dbsock/dbsock/supply/containers" (testcontainers-go) to start containers`)

// containerRuntime is the registered runtime, or an error saying how to
// have one.
func containerRuntime() (Runtime, error) {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	if registered == nil {
		return nil, errNoRuntime
	}
	return registered, nil
}

// runContainer runs req with the registered runtime, the run's reaper
// watching (reaper.go) from before its first container.
func runContainer(ctx context.Context, req ContainerRequest) (RunningContainer, error) {
	rt, err := containerRuntime()
	if err != nil {
		return nil, err
	}
	_ = watchOwner(DockerSocket()) // without it, dbsock clean removes what a killed run left
	return rt.Run(ctx, req)
}

// readLogs is the end of what c wrote, at most 64 KiB of it, as its last
// 8 lines.
func readLogs(c RunningContainer) string {
	rc, err := c.Logs(context.Background())
	if err != nil {
		return ""
	}
	defer rc.Close()
	b := make([]byte, 64<<10)
	n, _ := ioReadFull(rc, b)
	return Tail(string(b[:n]), 8)
}
