// Package cpustat reads how much CPU time and how many context switches a
// process (dbsock itself, or a server and all its descendants) has used, so
// that the timing loop can read them at the edges of each timed block and
// report CPU per operation on both sides. Nothing here runs inside the
// timed loop.
package cpustat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dbsock/dbsock/internal/setting"
)

// Sample is cumulative CPU time and context switches.
type Sample struct {
	CPUNs       int64
	Voluntary   int64
	Involuntary int64
	// WaitNs is the time the process's threads were runnable but waited
	// for a CPU (the run queue: /proc/PID/task/TID/schedstat's second
	// field); 0 where it is not read (HasWait false).
	WaitNs int64
	// HasWait says that WaitNs was read (Linux's schedstat).
	HasWait bool
	// Syscr and Syscw count read and write system calls (/proc/PID/io:
	// read, readv, pread and write-like calls; recv and send are not
	// counted there), -1 when the kernel does not keep them.
	Syscr, Syscw int64
	// NoSwitches says that the OS does not count this process's context
	// switches and read/write calls (macOS): those fields mean nothing.
	NoSwitches bool
	// NoSyscalls says that this process may not read the read/write call
	// counts (another user's /proc/PID/io, as a server container's is to
	// a dbsock that is not root): Syscr and Syscw mean nothing.
	NoSyscalls bool
}

// Sub returns s - o, each field at least 0 (a thread that exited between
// two samples takes its counts with it).
func (s Sample) Sub(o Sample) Sample {
	return Sample{CPUNs: max(s.CPUNs-o.CPUNs, 0), Voluntary: max(s.Voluntary-o.Voluntary, 0), Involuntary: max(s.Involuntary-o.Involuntary, 0),
		WaitNs: max(s.WaitNs-o.WaitNs, 0), HasWait: s.HasWait && o.HasWait,
		Syscr: max(s.Syscr-o.Syscr, 0), Syscw: max(s.Syscw-o.Syscw, 0), NoSwitches: s.NoSwitches || o.NoSwitches, NoSyscalls: s.NoSyscalls || o.NoSyscalls}
}

// Add returns s + o.
func (s Sample) Add(o Sample) Sample {
	return Sample{CPUNs: s.CPUNs + o.CPUNs, Voluntary: s.Voluntary + o.Voluntary, Involuntary: s.Involuntary + o.Involuntary,
		WaitNs: s.WaitNs + o.WaitNs, HasWait: o.HasWait && (s.HasWait || s == Sample{}), // an empty sum takes o's
		Syscr: s.Syscr + o.Syscr, Syscw: s.Syscw + o.Syscw, NoSwitches: s.NoSwitches || o.NoSwitches, NoSyscalls: s.NoSyscalls || o.NoSyscalls}
}

// Meter reads one side's cumulative counters.
type Meter interface {
	Read() (Sample, error)
	// Describe says what is measured and how, for the report.
	Describe() string
}

// Self measures this whole process with getrusage(RUSAGE_SELF): user plus
// system time of every thread, and voluntary and involuntary context
// switches.
type Self struct{}

// Read implements Meter.
func (Self) Read() (Sample, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Sample{}, fmt.Errorf("getrusage: %w", err)
	}
	r, w, ok := syscalls("/proc/self/io")
	s := Sample{CPUNs: ru.Utime.Nano() + ru.Stime.Nano(), Voluntary: ru.Nvcsw, Involuntary: ru.Nivcsw, Syscr: r, Syscw: w, NoSyscalls: !ok}
	if procfs {
		if own, err := ReadProcess(os.Getpid()); err == nil {
			s.WaitNs, s.HasWait = own.WaitNs, true // the threads alive now: a thread that ended took its wait with it
		}
	}
	return s, nil
}

// syscalls reads syscr and syscw from a /proc/PID/io file (the whole
// process, every thread); ok is false when this process may not read it
// (a process that is gone counts nothing, and is no reason to drop them).
func syscalls(path string) (r, w int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, !errors.Is(err, os.ErrPermission)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			r, _ = strconv.ParseInt(v, 10, 64)
		} else if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			w, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return r, w, true
}

// Describe implements Meter.
func (Self) Describe() string { return "dbsock's own process, getrusage(RUSAGE_SELF)" }

// Tree measures a process and all its descendants (a server's backend
// processes may be children of its first one; a container's processes descend from its
// first one): CPU time from every thread's /proc/PID/task/TID/schedstat (in
// nanoseconds, where the kernel keeps it), context switches from each
// thread's status. The set of processes is found once and again after
// Refresh, not at every Read.
type Tree struct {
	Root int
	What string // e.g. "local process tree" or "container process tree"

	mu   sync.Mutex
	pids []int
}

// NewTree measures root and its descendants.
func NewTree(root int, what string) *Tree { return &Tree{Root: root, What: what} }

// Describe implements Meter.
func (t *Tree) Describe() string {
	if !procfs {
		return fmt.Sprintf("%s of pid %d, CPU time of every process (gopsutil; %s counts no context switches per process)", t.What, t.Root, runtime.GOOS)
	}
	return fmt.Sprintf("%s of pid %d, /proc schedstat and status of every thread", t.What, t.Root)
}

// procfs says whether process trees are read from /proc (Linux) rather
// than through gopsutil.
var procfs = runtime.GOOS == "linux"

// descendants is Descendants where there is /proc, else gopsutil's.
func descendants(root int) ([]int, error) {
	if !procfs {
		return portableDescendants(root)
	}
	return Descendants(root)
}

// Refresh finds the processes again (call it after connections were
// opened: servers may start a process per connection).
func (t *Tree) Refresh() error {
	pids, err := descendants(t.Root)
	t.mu.Lock()
	t.pids = pids
	t.mu.Unlock()
	return err
}

// Read implements Meter.
func (t *Tree) Read() (Sample, error) {
	t.mu.Lock()
	pids := t.pids
	t.mu.Unlock()
	if pids == nil {
		if err := t.Refresh(); err != nil {
			return Sample{}, err
		}
		t.mu.Lock()
		pids = t.pids
		t.mu.Unlock()
	}
	if !procfs {
		return portableRead(pids)
	}
	s := Sample{HasWait: true}
	for _, pid := range pids {
		ps, err := ReadProcess(pid)
		if err != nil && pid == t.Root {
			return s, err
		}
		if err == nil { // else it ended: its counts went with it
			s = s.Add(ps)
		}
	}
	return s, nil
}

// ReadProcess sums pid's threads' counters.
func ReadProcess(pid int) (Sample, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	s := Sample{HasWait: true}
	for _, task := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s", pid, task.Name())
		b, err := os.ReadFile(dir + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		if f := bytes.Fields(b); len(f) > 1 {
			v, _ := strconv.ParseInt(string(f[0]), 10, 64)
			w, _ := strconv.ParseInt(string(f[1]), 10, 64)
			s.CPUNs += v
			s.WaitNs += w
		}
		vol, invol := switches(dir + "/status")
		s.Voluntary += vol
		s.Involuntary += invol
	}
	var ok bool
	s.Syscr, s.Syscw, ok = syscalls(fmt.Sprintf("/proc/%d/io", pid))
	s.NoSyscalls = !ok
	return s, nil
}

func switches(path string) (vol, invol int64) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			vol, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		} else if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
			invol, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return vol, invol
}

// Descendants returns root and every process below it, from the parent
// pids in /proc/*/stat.
func Descendants(root int) ([]int, error) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", root)); err != nil {
		return nil, fmt.Errorf("process %d: %w", root, err)
	}
	children := map[int][]int{}
	matches, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(string(bytes.Fields(b[:i])[0]))
		ppid, err2 := strconv.Atoi(string(f[1]))
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// Refresher is a Meter whose set of processes can be found again.
type Refresher interface{ Refresh() error }

// listenInodes are the socket inodes ("socket:[N]") listening on TCP port
// in this host's network namespace (/proc/net/tcp and tcp6).
func listenInodes(port int) map[string]bool {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			local := f[1]
			i := strings.LastIndexByte(local, ':')
			if p, err := strconv.ParseInt(local[i+1:], 16, 32); err == nil && int(p) == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	return inodes
}

// ListeningPID finds the process that listens on TCP port on this host,
// from /proc/net/tcp and tcp6 (the socket's inode) and the processes' open
// files (/proc/PID/fd, which only root, or the process's owner, may read).
func ListeningPID(port int) (int, error) {
	inodes := listenInodes(port)
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on TCP port %d in this host's network namespace", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, setting.Err("the process listening on TCP port %d is not visible to this user (give %s, or run as its owner or root)", port, setting.ServerPID)
}

// OwnsPort says whether root or a process below it holds the socket
// listening on TCP port: a pid given for a server must be that server. It
// fails when nothing listens there, or when none of the tree's open files
// can be read (another user's processes).
func OwnsPort(root, port int) (bool, error) {
	inodes := listenInodes(port)
	if len(inodes) == 0 {
		return false, fmt.Errorf("nothing listens on TCP port %d in this host's network namespace", port)
	}
	pids, err := Descendants(root)
	if err != nil {
		return false, err
	}
	readable := false
	for _, pid := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		readable = true
		for _, fd := range fds {
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && inodes[link] {
				return true, nil
			}
		}
	}
	if !readable {
		return false, fmt.Errorf("the open files of process %d are not visible to this user (run as its owner or root)", root)
	}
	return false, nil
}

// Sum measures several meters as one (a server made of several process
// trees, such as a pooler and its database).
type Sum []Meter

// Read implements Meter.
func (m Sum) Read() (Sample, error) {
	var s Sample
	for _, one := range m {
		x, err := one.Read()
		if err != nil {
			return s, err
		}
		s = s.Add(x)
	}
	return s, nil
}

// Describe implements Meter.
func (m Sum) Describe() string {
	parts := make([]string, len(m))
	for i, one := range m {
		parts[i] = one.Describe()
	}
	return "the sum of: " + strings.Join(parts, "; ")
}

// Refresh implements Refresher for every meter that has it.
func (m Sum) Refresh() error {
	var errs []error
	for _, one := range m {
		if r, ok := one.(Refresher); ok {
			errs = append(errs, r.Refresh())
		}
	}
	return errors.Join(errs...)
}
