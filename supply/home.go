package supply

// dbsock run inside a container that holds the engine's socket (a CI job's
// container, as GitLab's and Jenkins' Docker executors make them): the
// engine resolves a bind mount's source on its own host and knows
// processes by the host's pids, not by this container's. dbsock asks the
// engine what container it runs in, to map its own paths to the host's
// (through the container's mounts), to put its servers in the network
// namespace it dials from, and to record that container in its owner
// records, which `dbsock clean` elsewhere cannot judge by pid alone.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dbsock/dbsock/internal/setting"
)

// Home is the container this dbsock runs in, as the engine sees it.
type Home struct {
	// ID is the engine's ID of the container, Name its name.
	ID, Name string
	// Mounts are its bind mounts and volumes.
	Mounts []HomeMount
	// HostNetwork and HostPID: it shares the host's network namespace
	// (--network host) or PID namespace (--pid host).
	HostNetwork, HostPID bool
}

// HomeMount is one of the container's mounts: Source on the engine's
// host, at Destination inside.
type HomeMount struct {
	Type        string
	Source      string
	Destination string
}

// containerFile is the source of a container's /etc/hostname, /etc/hosts
// or /etc/resolv.conf, which Docker and Podman bind-mount from the
// container's own directory (named by its ID); cgroupContainer is a
// cgroup v1 path of a container's (/docker/ID, docker-ID.scope).
var (
	containerFile   = regexp.MustCompile(`/([0-9a-f]{64})/(?:userdata/)?(?:hostname|hosts|resolv\.conf)$`)
	cgroupContainer = regexp.MustCompile(`(?:/docker/|docker-|libpod-)([0-9a-f]{64})(?:\.scope)?$`)
)

// homeCandidates lists the container IDs this process's own mounts and
// cgroups name, each once, the most telling (mountinfo's) first. Only the
// files mounted at /etc/hostname, /etc/hosts and /etc/resolv.conf count:
// on the host, mountinfo lists other containers' mounts too.
func homeCandidates() []string {
	mountinfo, _ := os.ReadFile("/proc/self/mountinfo")
	cgroup, _ := os.ReadFile("/proc/self/cgroup")
	return candidatesIn(string(mountinfo), string(cgroup))
}

// candidatesIn is homeCandidates from the text of mountinfo and cgroup.
func candidatesIn(mountinfo, cgroup string) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(m []string) {
		if m != nil && !seen[m[1]] {
			seen[m[1]] = true
			ids = append(ids, m[1])
		}
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && (f[4] == "/etc/hostname" || f[4] == "/etc/hosts" || f[4] == "/etc/resolv.conf") {
			add(containerFile.FindStringSubmatch(f[3]))
		}
	}
	for _, line := range strings.Split(cgroup, "\n") {
		add(cgroupContainer.FindStringSubmatch(line))
	}
	return ids
}

var homes sync.Map // socket -> *Home (nil: none the engine knows)

// HomeOn is the container of the engine at socket that this process runs
// in, or nil when it runs in none the engine knows (on the host, or in a
// container of another engine). The answer is asked once per socket.
func HomeOn(ctx context.Context, socket string) *Home {
	if h, ok := homes.Load(socket); ok {
		return h.(*Home)
	}
	var home *Home
	for _, id := range homeCandidates() {
		if h, err := inspectHome(ctx, socket, id); err == nil {
			home = h
			break
		}
	}
	homes.Store(socket, home)
	return home
}

// inspectHome asks the engine about container id (read from this
// process's own mounts or cgroup), which must be running.
func inspectHome(ctx context.Context, socket, id string) (*Home, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := DockerAPI(ctx, socket, http.MethodGet, "/containers/"+id+"/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("inspect container %.12s: the engine answered %s", id, resp.Status)
	}
	var c struct {
		ID         string `json:"Id"`
		Name       string
		State      struct{ Running bool }
		HostConfig struct{ NetworkMode, PidMode string }
		Mounts     []HomeMount
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&c); err != nil {
		return nil, fmt.Errorf("inspect container %.12s: %w", id, err)
	}
	if !c.State.Running || c.ID != id {
		return nil, fmt.Errorf("container %.12s does not run", id)
	}
	return &Home{ID: c.ID, Name: strings.TrimPrefix(c.Name, "/"), Mounts: c.Mounts,
		HostNetwork: c.HostConfig.NetworkMode == "host", HostPID: c.HostConfig.PidMode == "host"}, nil
}

// HostPath is path (in this container) as the engine's host sees it, when
// it lies in a bind mount or a volume of the container.
func (h *Home) HostPath(path string) (string, bool) {
	path = filepath.Clean(path)
	best := -1
	for i, m := range h.Mounts {
		if (m.Type != "bind" && m.Type != "volume") || m.Source == "" {
			continue
		}
		if within(path, filepath.Clean(m.Destination)) && (best < 0 || len(m.Destination) > len(h.Mounts[best].Destination)) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	m := h.Mounts[best]
	return filepath.Join(m.Source, strings.TrimPrefix(path, filepath.Clean(m.Destination))), true
}

// Short is the container's name, or its short ID.
func (h *Home) Short() string {
	if h.Name != "" {
		return h.Name
	}
	return shortContainerID(h.ID)
}

// CheckHome checks, before anything starts, that a run whose servers run
// in containers of the engine at socket can run from the container this
// dbsock runs in (nil on the host): its temp dir, where the servers'
// socket directories go, must be shared with the host (the engine
// resolves bind mounts there). routes: the run asks for paths off the
// host network (published, bridge, service, pod); needs is what the
// provider needs (EngineNeeds), client the client's place.
func CheckHome(ctx context.Context, socket string, needs EngineNeeds, client string, routes bool) error {
	h := HomeOn(ctx, socket)
	if h == nil {
		return nil
	}
	where := fmt.Sprintf("dbsock runs in container %s of the Docker engine at %s", h.Short(), socket)
	switch {
	case needs.HostView != "":
		return setting.Err("%s: %s %s %s; use %s docker, which maps this container's paths to the host's and starts the servers in this container's network namespace", where, setting.Provider, needs.Provider, needs.HostView, setting.Provider)
	case client == "container":
		return setting.Err("%s: %s container starts a client container beside the servers, which this container already is; use %s host (the default)", where, setting.Client, setting.Client)
	case routes && !(h.HostNetwork && h.HostPID):
		return setting.Err("%s without the host's network and PID namespaces: the published, bridge, service and pod paths are dialed from the host's; run the job with --network host --pid host, or leave those paths out", where)
	}
	tmp, _ := tempBase()
	if _, ok := h.HostPath(tmp); !ok {
		return setting.Err("%s, and its temp dir %s is not shared with the host, where the engine looks for the servers' socket directories: mount a host directory into the job (docker run -v /srv/dbsock:/srv/dbsock ...) and set TMPDIR to it", where, tmp)
	}
	return nil
}

// OwnerOn is Self, with the container it runs in when the engine at socket
// knows that container: what the labels of the containers dbsock starts
// there, and their owner files, record.
func OwnerOn(ctx context.Context, socket string) Owner {
	o := Self()
	if h := HomeOn(ctx, socket); h != nil {
		o.Container = h.ID
	}
	return o
}

// joined says whether the servers join the network namespace of the
// container dbsock runs in (one not on the host's network): there dbsock
// dials their 127.0.0.1 and sockets as it would on the host.
func (d *Docker) joined() bool {
	h := d.inContainer()
	return h != nil && !h.HostNetwork
}

// inContainer is the container dbsock runs in (nil: on the host).
func (d *Docker) inContainer() *Home {
	d.omu.Lock()
	defer d.omu.Unlock()
	return d.home
}

// hostPIDs says whether dbsock sees the host's pids, which the engine
// names containers' processes by.
func (d *Docker) hostPIDs() bool {
	h := d.inContainer()
	return h == nil || h.HostPID
}

// networkMode is the servers' network, for the report.
func (d *Docker) networkMode() string {
	if d.joined() {
		return "the network namespace of dbsock's own container " + d.inContainer().Short()
	}
	return "host"
}

// hostPath is dir as the engine's host sees it (the same on the host;
// usableEngine has checked that it maps).
func (d *Docker) hostPath(dir string) string {
	h := d.inContainer()
	if h == nil {
		return dir
	}
	if p, ok := h.HostPath(dir); ok {
		return p
	}
	return dir
}

// ownerLabel is the run's Owner as its labels and owner file record it.
func (d *Docker) ownerLabel() string {
	d.omu.Lock()
	defer d.omu.Unlock()
	if d.owner.PID == 0 {
		return Self().String()
	}
	return d.owner.String()
}
