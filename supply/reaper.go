package supply

// The reaper: what a run starts on the Docker engine goes with it however
// it ends. dbsock removes its containers and networks itself when it ends,
// on Ctrl-C too; killed outright (SIGKILL, the kernel's OOM killer) it
// cannot, and the engine keeps them running (testcontainers' own reaper,
// Ryuk, is a container whose image cannot be pulled without a registry,
// and is off). So before the run's first container or network, dbsock
// starts a small process of its own binary (re-executed, argv[0]
// ReaperName), which leaves dbsock's process tree at once (it is started
// by a first process that exits) and runs in a session of its own, so that
// a terminal's Ctrl-C or a kill of dbsock's process group does not reach
// it. Its stdin is a pipe that dbsock holds open and never writes: when
// dbsock ends, however it ends, the kernel closes dbsock's end, and the
// reaper, once it sees that dbsock is gone (Owner.Alive), removes what the
// engine still holds labelled with dbsock's Owner (its containers, then
// its networks: a compose project's are compose's, and dbsock clean's),
// the run's tags of the client image and the run's temp dirs, and exits.
// After a run that ended well it finds nothing. dbsock clean remains for
// what it could not remove (the reaper killed too, the machine's power
// lost).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ReaperName is the reaper's argv[0], followed by the pid of the dbsock it
// watches, that dbsock's Owner and the engine's socket: what ps shows.
const ReaperName = "dbsock-reaper"

// reaperEnv marks the reaper's processes in their environment: "start"
// for the first process, which starts the reaper and exits, "reap" for
// the reaper.
const reaperEnv = "DBSOCK_REAPER"

// ReapWithin bounds the reaper's work once dbsock is gone: the wait for
// dbsock's process to be seen gone, then each removal's answer.
const ReapWithin = time.Minute

// composeProject is the label docker compose gives the containers and
// networks of a project: compose's to remove (dbsock's compose provider
// runs "down", or keeps them with --keep), and the reaper's to leave.
const composeProject = "com.docker.compose.project"

func init() {
	mode, ok := os.LookupEnv(reaperEnv)
	if !ok || len(os.Args) != 4 || os.Args[0] != ReaperName {
		return
	}
	if mode == "start" {
		os.Exit(startReaping())
	}
	os.Exit(reap(os.Args[2], os.Args[3]))
}

var (
	reaperMu sync.Mutex
	// reaperHeld is dbsock's end of the reaper's stdin, kept open (and
	// reachable, so that no finalizer closes it) as long as dbsock runs.
	reaperHeld map[string]*os.File
)

// watchOwner starts, once per engine socket, the reaper that removes this
// dbsock's containers, networks, client image tags and temp dirs when it
// ends. An error leaves the run as it was before the reaper (dbsock clean
// removes what a killed run left): it is returned for a test to read.
func watchOwner(socket string) error {
	reaperMu.Lock()
	defer reaperMu.Unlock()
	if reaperHeld[socket] != nil {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start the reaper of this run's containers: find this executable: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start the reaper of this run's containers: %w", err)
	}
	defer r.Close()
	self := Self()
	cmd := &exec.Cmd{Path: exe, Args: []string{ReaperName, strconv.Itoa(self.PID), self.String(), socket},
		Stdin: r, Dir: "/", Env: ServerEnv(reaperEnv + "=start"), SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	// The first process starts the reaper and exits at once: dbsock waits
	// for it (no zombie is left), and the reaper is none of dbsock's
	// children.
	if out, err := cmd.CombinedOutput(); err != nil {
		w.Close()
		return fmt.Errorf("start the reaper of this run's containers (%s): %w %s", exe, err, out)
	}
	if reaperHeld == nil {
		reaperHeld = map[string]*os.File{}
	}
	reaperHeld[socket] = w
	return nil
}

// startReaping is the first process: it starts the reaper, its stdin the
// pipe it was given, in the session it runs in, and exits.
func startReaping() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := &exec.Cmd{Path: exe, Args: os.Args, Stdin: os.Stdin, Dir: "/", Env: ServerEnv(reaperEnv + "=reap")}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// reap waits for EOF on stdin (the dbsock of owner is gone), then removes
// what that dbsock left on the engine at socket and in its temp dirs.
func reap(owner, socket string) int {
	o, err := ParseOwner(owner)
	if err != nil {
		return 1
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	// The pipe closes as dbsock exits: its process is gone a moment later.
	// A dbsock still seen running after that is never reaped.
	deadline := time.Now().Add(ReapWithin)
	for o.Alive() {
		if time.Now().After(deadline) {
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := ReapOwner(ctx, socket, o); err != nil {
		return 1
	}
	return 0
}

// ReapOwner removes what the dbsock o (shown to have ended) left: its
// containers (compose's left to compose) and networks on the engine at
// socket, its tags of the client image, and its temp dirs in the temp
// directory, with the processes using them.
func ReapOwner(ctx context.Context, socket string, o Owner) error {
	var errs []error
	for _, kind := range []string{"containers", "networks"} {
		errs = append(errs, removeOwned(ctx, socket, kind, o))
	}
	for _, tag := range clientTags(ctx, socket) {
		if t, ok := runTagOwner(tag); ok && t.PID == o.PID && t.Start == o.Start {
			untag(ctx, socket, tag)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "dbsock-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, OwnerFile))
		if err != nil {
			continue
		}
		if mine, err := ParseOwner(string(b)); err == nil && sameOwner(mine, o) {
			errs = append(errs, Leftover{Dir: d, Owner: o.PID, PIDs: processesUsing(d)}.Clean())
		}
	}
	return errors.Join(errs...)
}

// sameOwner says whether a and b are one dbsock process: its pid, start
// time and boot (where it ran, in a container or not, aside).
func sameOwner(a, b Owner) bool {
	return a.PID == b.PID && a.Start == b.Start && a.Boot == b.Boot
}

// removeOwned force-removes the containers (kind "containers") or networks
// ("networks") on the engine at socket that dbsock o labelled, but a
// compose project's.
func removeOwned(ctx context.Context, socket, kind string, o Owner) error {
	filter := url.QueryEscape(`{"label":["` + PIDLabel + `=` + strconv.Itoa(o.PID) + `"]}`)
	list := "/networks?filters=" + filter
	if kind == "containers" {
		list = "/containers/json?all=1&filters=" + filter
	}
	resp, err := DockerAPI(ctx, socket, http.MethodGet, list)
	if err != nil {
		return fmt.Errorf("list the %s of dbsock pid %d: %w", kind, o.PID, err)
	}
	defer resp.Body.Close()
	var found []struct {
		ID     string `json:"Id"`
		Labels map[string]string
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&found); err != nil {
		return fmt.Errorf("list the %s of dbsock pid %d: %w", kind, o.PID, err)
	}
	var errs []error
	for _, f := range found {
		owner, err := ParseOwner(f.Labels[OwnerLabel])
		if err != nil || !sameOwner(owner, o) || f.Labels[composeProject] != "" {
			continue
		}
		c := LeftoverContainer{ID: f.ID, Network: kind == "networks"}
		errs = append(errs, c.Remove(ctx, socket))
	}
	return errors.Join(errs...)
}
