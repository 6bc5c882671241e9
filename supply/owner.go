package supply

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Owner identifies the dbsock process that started something (a temp dir,
// a container) well enough for a later `dbsock clean` to tell whether it
// still runs, from the host or from inside a container: a pid alone does
// not (in a CI container dbsock is often pid 1, and pid 1 always runs on
// the host). Start is the process's start time in clock ticks after boot
// (/proc/PID/stat, field 22), the same from every PID namespace of the
// host; Boot is the kernel's boot id, so that nothing outlives a reboot.
// PID is a number in the PID namespace PIDNS; Container, when the owner
// ran in a container of the engine its containers are on, is that
// container's ID, which the engine can be asked about (see Judge).
type Owner struct {
	PID   int
	Start uint64 // 0: unknown (an older dbsock wrote only the pid)
	Boot  string
	// PIDNS is the inode of the owner's PID namespace (/proc/self/ns/pid;
	// 0: unknown, an older dbsock's record).
	PIDNS uint64
	// Container is the engine's ID of the container the owner ran in
	// ("": none the engine knew).
	Container string
}

// Self is this process as an Owner (without Container: see OwnerOn).
var Self = sync.OnceValue(func() Owner {
	pid := os.Getpid()
	start, _ := startTime(pid)
	ns, _ := pidNamespace("self")
	return Owner{PID: pid, Start: start, Boot: bootID(), PIDNS: ns}
})

// String is the form ParseOwner reads: "PID START BOOT pidns=N
// container=ID" (the last two when known).
func (o Owner) String() string {
	s := fmt.Sprintf("%d %d %s", o.PID, o.Start, cmp.Or(o.Boot, "-"))
	if o.PIDNS != 0 {
		s += fmt.Sprintf(" pidns=%d", o.PIDNS)
	}
	if o.Container != "" {
		s += " container=" + o.Container
	}
	return s
}

// ParseOwner reads an Owner's String, or a bare pid (older dbsock).
func ParseOwner(s string) (Owner, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Owner{}, fmt.Errorf("empty owner")
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return Owner{}, fmt.Errorf("owner %q: no pid", s)
	}
	o := Owner{PID: pid}
	if len(f) >= 2 {
		if o.Start, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return Owner{}, fmt.Errorf("owner %q: bad start time", s)
		}
	}
	if len(f) >= 3 && f[2] != "-" {
		o.Boot = f[2]
	}
	for _, kv := range f[min(len(f), 3):] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "pidns":
			if o.PIDNS, err = strconv.ParseUint(v, 10, 64); err != nil {
				return Owner{}, fmt.Errorf("owner %q: bad PID namespace", s)
			}
		case "container":
			if !containerID.MatchString(v) {
				return Owner{}, fmt.Errorf("owner %q: bad container ID", s)
			}
			o.Container = v
		}
	}
	return o, nil
}

// Alive says whether the owner is known to run, as seen from this PID
// namespace alone: the same boot, a live process of that pid, and (where
// known) the same start time, so that a pid used again is not taken for
// it. Judge is what clean asks: it also tells an owner in another PID
// namespace, and says when it cannot.
func (o Owner) Alive() bool {
	if o.Boot != "" && o.Boot != bootID() {
		return false
	}
	if !alive(o.PID) {
		return false
	}
	if o.Start == 0 {
		return true
	}
	start, err := startTime(o.PID)
	return err != nil || start == o.Start // unreadable: assume alive, never kill a live run
}

// startTime reads field 22 of /proc/PID/stat (after the command name in
// parentheses, which may itself hold spaces and parentheses).
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// bootID is the kernel's id of this boot ("" where it cannot be read).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
