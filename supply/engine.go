package supply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// Engine describes the Docker engine as dbsock's container providers see it.
type Engine struct {
	Socket    string
	Reachable bool
	Problem   string
	// Denied: the engine's socket is there, but this user may not use it.
	Denied      bool
	Version     string
	OS          string
	Rootless    bool
	Desktop     bool
	HostNetwork bool
	// Arch is the engine's machine architecture as it names it (x86_64,
	// aarch64): what a binary run in its containers must be built for.
	Arch string
}

// Unusable says why dbsock cannot use the engine ("" when it can): this
// user may not, or no engine answers.
func (e Engine) Unusable() string {
	switch {
	case e.Reachable:
		return ""
	case e.Denied:
		return fmt.Sprintf("this user may not use the Docker engine's socket %s (%s)", e.Socket, e.Problem)
	}
	return "no Docker engine answers (" + e.Problem + ")"
}

// EngineNeeds is what a provider that runs its servers in the Docker
// engine's containers needs of that engine, and of where dbsock runs: the
// checks made before anything starts (Engine.CannotRun, CheckHome) read
// it, and each such provider gives its own (DockerNeeds; package compose's
// EngineNeeds), so that the checks know no provider by name. The zero
// value is a provider that runs no containers.
type EngineNeeds struct {
	// Provider is the provider's name, as --provider takes it.
	Provider string
	// HostNetwork, when set, says why the provider's servers need the
	// engine's host network to be this host's (what listens where): an
	// engine whose containers have no host network of this host's is
	// refused.
	HostNetwork string
	// HostView, when set, says why the provider cannot run from inside a
	// container (what it hands the engine as the host sees it): a run
	// from a container of the engine is refused.
	HostView string
}

// DockerNeeds is what the docker provider needs of the engine: a Linux
// engine (not Docker Desktop's VM); without host networking its servers
// sit behind ports published on 127.0.0.1, and from a container of the
// engine it maps that container's paths and network namespace.
func DockerNeeds() EngineNeeds { return EngineNeeds{Provider: "docker"} }

// CannotRun says, before anything starts, why the provider that needs
// needs (none: the zero value) or, with client, dbsock's client container
// cannot work with this engine: Docker Desktop runs containers in a VM;
// without host networking (rootless Docker) a provider whose servers
// listen on the host network, and the client container, would not share
// this host's 127.0.0.1. Nil when they can, and when no engine answers:
// the providers say so themselves when asked for a server.
func (e Engine) CannotRun(needs EngineNeeds, client bool) error {
	if !e.Reachable {
		return nil
	}
	switch {
	case e.Desktop && needs.Provider != "":
		return desktopError(needs.Provider, e)
	case needs.HostNetwork != "" && !e.HostNetwork:
		return setting.Err("%s provider: the engine (%s) gives containers no host network, and %s, which would not be this host's: use %s docker (its servers on the run's own bridge network, behind a port published on 127.0.0.1) or %s local", needs.Provider, engineKind(e), needs.HostNetwork, setting.Provider, setting.Provider)
	case client && e.Desktop:
		return setting.Err("start dbsock's client container: the engine is %s, which runs containers in a VM: %s container needs a Linux engine with host networking (it was built and tested only on one); use %s local with servers installed here", e.OS, setting.Client, setting.Provider)
	case client && !e.HostNetwork:
		return setting.Err("start dbsock's client container: the engine (%s) gives containers no host network, so a client there would not share this host's 127.0.0.1 with the servers; use %s host", engineKind(e), setting.Client)
	}
	return nil
}

// Networking says, in words, what the engine's containers can have for
// dbsock's servers and clients.
func (e Engine) Networking() string {
	switch {
	case e.HostNetwork:
		return "host networking: possible: a container server can listen on this host's 127.0.0.1, so TCP takes the same loopback path as a native server"
	case e.Desktop:
		return "host networking: not this host's (Docker Desktop runs containers in a VM, across which a socket in a bind mount cannot be reached): --provider docker and compose and --client container are refused"
	case e.Rootless:
		return "host networking: not this host's (rootless Docker's is the engine's own network namespace): --provider docker puts each server on the run's own bridge network behind a port published on 127.0.0.1 (said in the report; no tls, published or bridge path), sockets in bind mounts work; --provider compose and --client container are refused"
	}
	return "host networking: not possible here (" + e.OS + "): TCP to a container would cross Docker's port proxy"
}

// ProbeEngine asks the engine at $DOCKER_HOST (unix://) or
// /var/run/docker.sock for /info.
func ProbeEngine(ctx context.Context, timeout time.Duration) Engine {
	d := Engine{Socket: "/var/run/docker.sock"}
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		d.Socket = strings.TrimPrefix(h, "unix://")
	} else if h != "" {
		d.Problem = "DOCKER_HOST is " + h + ": dbsock uses only an engine on this machine's Unix socket (unix://), whose bind mounts are this machine's directories and whose published ports are on this machine's 127.0.0.1"
		return d
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", d.Socket)
		}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/info", nil)
	resp, err := client.Do(req)
	if err != nil {
		d.Denied = errors.Is(err, syscall.EACCES)
		d.Problem = drivers.Explain(unwrapURL(err), drivers.SocketAt(d.Socket)).Error()
		return d
	}
	defer resp.Body.Close()
	var info struct {
		ServerVersion   string
		OperatingSystem string
		OSType          string
		Architecture    string
		SecurityOptions []string
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		d.Problem = "the engine's /info did not decode: " + err.Error()
		return d
	}
	d.Reachable = true
	d.Version, d.OS, d.Arch = info.ServerVersion, info.OperatingSystem, info.Architecture
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "rootless") {
			d.Rootless = true
		}
	}
	d.Desktop = strings.Contains(info.OperatingSystem, "Docker Desktop")
	d.HostNetwork = info.OSType == "linux" && !d.Rootless && !d.Desktop
	return d
}

func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
