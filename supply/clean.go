package supply

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// OwnerFile, in each local provider temp dir, holds the Owner (pid, start
// time, boot id) of the dbsock that made it.
const OwnerFile = "owner.pid"

// Leftover is a temp dir of a dbsock run that ended without cleaning up
// (killed with SIGKILL, or the machine lost power), with the server
// processes still using it.
type Leftover struct {
	Dir   string
	Owner int
	PIDs  []int
	// Why says how its owner is known to be gone.
	Why string
}

// Kept is something of dbsock's that clean leaves alone because it cannot
// show that its owner has ended (Owner.Judge): What it is, and Why, with
// what to do.
type Kept struct {
	What, Why string
}

// FindLeftovers lists dbsock temp dirs under bases (and /tmp) whose owner
// is shown to be gone (Owner.Judge, asking the engine at socket about an
// owner's container), and those it cannot judge. Only dirs with an
// OwnerFile count.
func FindLeftovers(ctx context.Context, socket string, bases ...string) ([]Leftover, []Kept, error) {
	seen := map[string]bool{}
	var out []Leftover
	var kept []Kept
	for _, b := range append(bases, "/tmp") {
		dirs, err := filepath.Glob(filepath.Join(b, "dbsock-*"))
		if err != nil {
			return nil, nil, err
		}
		for _, d := range dirs {
			if seen[d] {
				continue
			}
			seen[d] = true
			fi, err := os.Lstat(d)
			if err != nil || !fi.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, OwnerFile))
			if err != nil {
				continue // not made by dbsock's local provider
			}
			owner, err := ParseOwner(string(b))
			if err != nil {
				continue
			}
			switch live, why := owner.Judge(ctx, socket); live {
			case OwnerDead:
				out = append(out, Leftover{Dir: d, Owner: owner.PID, PIDs: processesUsing(d), Why: why})
			case OwnerUnknown:
				kept = append(kept, Kept{What: d, Why: why})
			}
		}
	}
	return out, kept, nil
}

// Clean kills the leftover's server processes and removes its dir.
func (l Leftover) Clean() error {
	var errs []error
	for _, pid := range l.PIDs {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill leftover server pid %d: %w", pid, err))
		}
	}
	if err := os.RemoveAll(l.Dir); err != nil {
		errs = append(errs, fmt.Errorf("remove leftover dir %s: %w", l.Dir, err))
	}
	return errors.Join(errs...)
}

// alive reports whether pid is a running process. A zombie (killed, not
// yet reaped by its parent) is dead: it holds nothing and will run no more.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reads the state letter of /proc/PID/stat (after the command name
// in parentheses, which may itself hold spaces and parentheses).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// processesUsing lists processes that run in dir or below it, or have it
// (or a path below it) as an argument or a flag's value: servers get their
// paths as arguments, or through stdin (a configuration that holds a
// password), and all run in their own
// directory. A path is matched whole: /tmp/dbsock-1 does not match
// /tmp/dbsock-12, and a process whose environment merely names it is left
// alone.
func processesUsing(dir string) []int {
	matches, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, m := range matches {
		pid, err := strconv.Atoi(filepath.Base(m))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(m, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(m, "cwd"))
		if within(cwd, dir) || argNames(string(cmdline), dir) {
			out = append(out, pid)
		}
	}
	return out
}

// within says whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// argNames says whether one of cmdline's NUL-separated arguments is a path
// within dir, alone or as the value of a flag (--datadir=DIR/data,
// file:DIR/).
func argNames(cmdline, dir string) bool {
	for _, arg := range strings.Split(cmdline, "\x00") {
		for off := 0; off < len(arg); {
			i := strings.Index(arg[off:], dir)
			if i < 0 {
				break
			}
			i += off
			before := i == 0 || arg[i-1] == '=' || arg[i-1] == ':'
			rest := arg[i+len(dir):]
			if before && (rest == "" || rest[0] == '/') {
				return true
			}
			off = i + 1
		}
	}
	return false
}

// LeftoverContainer is a container (or, with Network set, a network) a
// killed dbsock run left behind.
type LeftoverContainer struct {
	ID, Image, Target string
	Owner             int
	Network           bool
	// Why says how its owner is known to be gone.
	Why string
	// RunDir is the run's temp dir on the host (the parent of the
	// server's socket directory), where the engine knows it: that of a
	// run inside a container, under a directory it shares with the host.
	RunDir string
}

// FindLeftoverContainers lists containers, then networks (the published
// and bridge paths'), labelled by dbsock whose dbsock is shown to be gone
// (Owner.Judge), and those whose owner it cannot judge. With no Docker
// engine it returns none.
func FindLeftoverContainers(ctx context.Context, socket string) ([]LeftoverContainer, []Kept, error) {
	containers, kept, err := findLeftovers(ctx, socket, "/containers/json?all=1&filters=", false)
	if err != nil {
		return nil, nil, err
	}
	networks, keptNets, err := findLeftovers(ctx, socket, "/networks?filters=", true)
	return append(containers, networks...), append(kept, keptNets...), err
}

func findLeftovers(ctx context.Context, socket, list string, network bool) ([]LeftoverContainer, []Kept, error) {
	filter := url.QueryEscape(`{"label":["` + Label + `=1"]}`)
	resp, err := DockerAPI(ctx, socket, http.MethodGet, list+filter)
	if err != nil {
		return nil, nil, nil // no engine: nothing of ours can be there
	}
	defer resp.Body.Close()
	kind := "container"
	if network {
		kind = "network"
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("list dbsock's %ss: the Docker engine answered %s", kind, resp.Status)
	}
	var found []struct {
		ID     string `json:"Id"`
		Image  string
		Name   string
		Labels map[string]string
		Mounts []HomeMount
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&found); err != nil {
		return nil, nil, fmt.Errorf("list dbsock's %ss: %w", kind, err)
	}
	var out []LeftoverContainer
	var kept []Kept
	for _, c := range found {
		spec := c.Labels[OwnerLabel]
		if spec == "" {
			spec = c.Labels[PIDLabel] // an older dbsock's
		}
		owner, err := ParseOwner(spec)
		if err != nil {
			continue // started by hand (docker compose up)
		}
		target := cmp.Or(c.Labels[Label+".target"], c.Name)
		switch live, why := owner.Judge(ctx, socket); live {
		case OwnerDead:
			out = append(out, LeftoverContainer{ID: c.ID, Image: c.Image, Target: target, Owner: owner.PID, Network: network, Why: why, RunDir: runDir(c.Mounts)})
		case OwnerUnknown:
			kept = append(kept, Kept{What: fmt.Sprintf("%s %s (%s)", kind, shortContainerID(c.ID), target), Why: why})
		}
	}
	return out, kept, nil
}

// Remove force-removes the container and its anonymous volumes (or the
// network). A container another remover is removing (the run's reaper,
// another dbsock clean: the engine answers 409) is waited for, a few
// seconds at most.
func (c LeftoverContainer) Remove(ctx context.Context, socket string) error {
	path := "/containers/" + c.ID + "?force=1&v=1"
	if c.Network {
		path = "/networks/" + c.ID
	}
	resp, err := DockerAPI(ctx, socket, http.MethodDelete, path)
	if err != nil {
		return fmt.Errorf("remove container %s: %w", shortContainerID(c.ID), err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusConflict && !c.Network {
		for deadline := time.Now().Add(removalWait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if containerRuns(ctx, socket, c.ID) == "gone" {
				return nil
			}
		}
	}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("remove container %s: the Docker engine answered %s", shortContainerID(c.ID), resp.Status)
	}
	return nil
}

// removalWait bounds the wait for a container that another remover is
// removing.
const removalWait = 10 * time.Second

// DockerSocket is the engine socket dbsock talks to ($DOCKER_HOST when it
// is unix://, else /var/run/docker.sock).
func DockerSocket() string {
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		return strings.TrimPrefix(h, "unix://")
	}
	return "/var/run/docker.sock"
}

// RemoveLabelled force-removes every container (kind "containers") or
// network (kind "networks") carrying all of labels, through the engine's
// API: a stopped server's grace period is not waited for. It returns how
// many it removed.
func RemoveLabelled(ctx context.Context, socket, kind string, labels ...string) (int, error) {
	b, err := json.Marshal(map[string][]string{"label": labels})
	if err != nil {
		return 0, err
	}
	list := "/" + kind + "?filters=" + url.QueryEscape(string(b))
	if kind == "containers" {
		list = "/containers/json?all=1&filters=" + url.QueryEscape(string(b))
	}
	resp, err := DockerAPI(ctx, socket, http.MethodGet, list)
	if err != nil {
		return 0, fmt.Errorf("list %s labelled %v: %w", kind, labels, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("list %s labelled %v: the Docker engine answered %s", kind, labels, resp.Status)
	}
	var found []struct {
		ID string `json:"Id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&found); err != nil {
		return 0, fmt.Errorf("list %s labelled %v: %w", kind, labels, err)
	}
	var errs []error
	for _, f := range found {
		path := "/networks/" + f.ID
		if kind == "containers" {
			path = "/containers/" + f.ID + "?force=1&v=1"
		}
		resp, err := DockerAPI(ctx, socket, http.MethodDelete, path)
		if err != nil {
			errs = append(errs, fmt.Errorf("remove %s %s: %w", kind, shortContainerID(f.ID), err))
			continue
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
			errs = append(errs, fmt.Errorf("remove %s %s: the Docker engine answered %s", kind, shortContainerID(f.ID), resp.Status))
		}
	}
	return len(found), errors.Join(errs...)
}

// runDir is the run's temp dir that holds the socket directory mounted at
// /sock, when it is one of dbsock's (dbsock-*).
func runDir(mounts []HomeMount) string {
	for _, m := range mounts {
		if m.Destination == "/sock" && m.Type == "bind" {
			if d := filepath.Dir(m.Source); strings.HasPrefix(filepath.Base(d), "dbsock-") {
				return d
			}
		}
	}
	return ""
}
