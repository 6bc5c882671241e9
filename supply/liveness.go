package supply

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Liveness is what `dbsock clean` can tell of an Owner.
type Liveness int

const (
	// OwnerAlive: the owner runs (or cannot be told from a process that
	// does); nothing of it is removed.
	OwnerAlive Liveness = iota
	// OwnerDead: the owner is shown to have ended; what it left may go.
	OwnerDead
	// OwnerUnknown: the owner ran in a PID namespace this process cannot
	// see, and nothing shows it ended; nothing of it is removed.
	OwnerUnknown
)

// initPIDNS is the inode of the kernel's first PID namespace (the host's),
// a constant of the kernel (PROC_PID_INIT_INO).
const initPIDNS = 0xEFFFFFFC

// containerID is the form of the engine's full container IDs.
var containerID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Judge says whether the owner still runs, and why it says so, for a
// `dbsock clean` on this host whose engine is at socket. It shows an owner
// dead only from what this process and the engine both see alike: another
// boot; in this PID namespace, its pid gone or used by a process started
// at another time; in a PID namespace below this one (a run inside a
// container, seen from the host), no process of that namespace pid and
// start time; or the container it ran in stopped or gone. An owner it
// cannot see and cannot show dead is OwnerUnknown.
func (o Owner) Judge(ctx context.Context, socket string) (Liveness, string) {
	return o.judge(ctx, socket, Self().PIDNS, procComplete())
}

// judge is Judge from PID namespace self, where /proc lists every process
// of the namespaces below it when complete.
func (o Owner) judge(ctx context.Context, socket string, self uint64, complete bool) (Liveness, string) {
	if o.Boot != "" && o.Boot != bootID() {
		return OwnerDead, "it ran before the machine last booted"
	}
	if o.PIDNS == self && self != 0 {
		if o.Alive() {
			return OwnerAlive, "it runs"
		}
		return OwnerDead, fmt.Sprintf("dbsock pid %d is gone", o.PID)
	}
	if o.PIDNS == 0 && o.Alive() {
		return OwnerAlive, "it runs" // an older record: the pid runs here
	}
	if o.Start != 0 && nestedAlive(o) {
		return OwnerAlive, "it runs in a container's PID namespace"
	}
	if self == initPIDNS && complete && o.Start != 0 {
		// Every process of the machine is in view here, those of every
		// container included.
		return OwnerDead, fmt.Sprintf("dbsock pid %d of %s is gone", o.PID, nsName(o.PIDNS))
	}
	if o.Container != "" {
		switch st := containerRuns(ctx, socket, o.Container); st {
		case "gone", "stopped":
			return OwnerDead, fmt.Sprintf("the container it ran in (%.12s) is %s", o.Container, st)
		case "running":
			return OwnerUnknown, fmt.Sprintf("it ran as pid %d in container %.12s, which still runs, in a PID namespace this dbsock cannot see: run dbsock clean on the host or in that container, or stop that container", o.PID, o.Container)
		}
	}
	return OwnerUnknown, fmt.Sprintf("it ran as pid %d in %s, which this dbsock cannot see: run dbsock clean where that run ran (on the host, or in its container)", o.PID, nsName(o.PIDNS))
}

func nsName(ns uint64) string {
	if ns == 0 {
		return "a PID namespace it did not record (an older dbsock)"
	}
	return fmt.Sprintf("PID namespace pid:[%d]", ns)
}

// nestedAlive says whether a process visible here runs as o.PID in its
// own (innermost) PID namespace, started when o did, and, where its
// namespace can be read, in o's namespace: the owner seen from an
// enclosing PID namespace. Where the namespace cannot be read (another
// user's process), the pid and start time alone count as alive.
func nestedAlive(o Owner) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	want := strconv.Itoa(o.PID)
	for _, p := range procs {
		ns := nsPIDs(filepath.Join(p, "status"))
		if len(ns) < 2 || ns[len(ns)-1] != want {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		if start, err := startTime(pid); err != nil || start != o.Start || zombie(pid) {
			continue
		}
		if got, err := pidNamespace(strconv.Itoa(pid)); err == nil && o.PIDNS != 0 && got != o.PIDNS {
			continue
		}
		return true
	}
	return false
}

// nsPIDs reads the NSpid line of a /proc/PID/status: the process's pid in
// this namespace, then in each nested one, the innermost last.
func nsPIDs(status string) []string {
	f, err := os.Open(status)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NSpid:"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// pidNamespace is the inode of /proc/PROC/ns/pid (PROC a pid or "self").
func pidNamespace(proc string) (uint64, error) {
	link, err := os.Readlink("/proc/" + proc + "/ns/pid")
	if err != nil {
		return 0, err
	}
	inner, ok := strings.CutPrefix(link, "pid:[")
	if !ok || !strings.HasSuffix(inner, "]") {
		return 0, fmt.Errorf("/proc/%s/ns/pid is %q, not pid:[N]", proc, link)
	}
	return strconv.ParseUint(strings.TrimSuffix(inner, "]"), 10, 64)
}

// procComplete says whether /proc here lists every process: it does for
// root, and for others unless it is mounted with hidepid.
func procComplete() bool {
	if os.Geteuid() == 0 {
		return true
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[4] == "/proc" && strings.Contains(line, " - proc ") {
			return !strings.Contains(line, "hidepid=") || strings.Contains(line, "hidepid=0") || strings.Contains(line, "hidepid=off")
		}
	}
	return true
}

// containerRuns asks the engine at socket about container id: "running",
// "stopped", "gone" (the engine does not know it), or "" when it cannot
// tell (no engine, another answer).
func containerRuns(ctx context.Context, socket, id string) string {
	resp, err := DockerAPI(ctx, socket, http.MethodGet, "/containers/"+id+"/json")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return "gone"
	case http.StatusOK:
	default:
		return ""
	}
	var c struct {
		State struct{ Running, Restarting, Paused bool }
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&c); err != nil {
		return ""
	}
	if c.State.Running || c.State.Restarting || c.State.Paused {
		return "running"
	}
	return "stopped"
}
