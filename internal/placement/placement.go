// Package placement controls and reads back which CPUs the client and the
// servers run on. On small machines CPU placement moves latency more than
// the transport does (waking a server on another CPU costs tens of
// microseconds), so dbsock lets the user fix it and always reports it.
package placement

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Modes accepted by --placement.
var Modes = []string{"auto", "none", "same", "split"}

// Placement is a requested CPU placement; nil CPU lists mean "not pinned".
type Placement struct {
	Mode   string
	Client []int
	Server []int
	// Reason says why (auto), for the report.
	Reason string
}

// Resolve turns --placement and the explicit lists into a Placement.
// "auto" (the default) asks Choose for this machine; "same" puts client and
// servers on CPU 0; "split" puts the client on CPU 0 and the servers on
// CPU 1. Explicit lists override the mode's choice.
func Resolve(mode, clientList, serverList string) (Placement, error) {
	p := Placement{Mode: mode}
	switch mode {
	case "", "auto":
		cpus, err := ReadTopology()
		if err != nil {
			return p, err
		}
		if p, err = Choose(cpus); err != nil {
			return p, err
		}
	case "none":
	case "same":
		p.Client, p.Server = []int{0}, []int{0}
	case "split":
		if runtime.NumCPU() < 2 {
			return p, fmt.Errorf("--placement split needs 2 CPUs; this machine has %d", runtime.NumCPU())
		}
		p.Client, p.Server = []int{0}, []int{1}
	default:
		return p, fmt.Errorf("--placement %q is not accepted; use one of: %s", mode, strings.Join(Modes, ", "))
	}
	var err error
	if clientList != "" {
		if p.Client, err = ParseList(clientList); err != nil {
			return p, fmt.Errorf("--client-cpu: %w", err)
		}
		if p.Mode == "none" {
			p.Mode = "custom"
		}
	}
	if serverList != "" {
		if p.Server, err = ParseList(serverList); err != nil {
			return p, fmt.Errorf("--server-cpu: %w", err)
		}
		if p.Mode == "none" {
			p.Mode = "custom"
		}
	}
	return p, nil
}

// ParseList parses a CPU list such as "0", "0,2" or "0-3" and checks that
// every CPU exists on this machine.
func ParseList(s string) ([]int, error) { return parseList(s, runtime.NumCPU()) }

// parseList reads a CPU list whose CPUs are all below limit.
func parseList(s string, limit int) ([]int, error) {
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q is not like 0, 0,2 or 0-3", s)
		}
		for c := a; c <= b; c++ {
			if c >= limit {
				return nil, fmt.Errorf("CPU %d in %q does not exist; this machine has CPUs 0-%d", c, s, limit-1)
			}
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// FormatList renders a CPU list as "0,1"; an empty list as "".
func FormatList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

func cpuSet(cpus []int) *unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return &set
}

// PinProcess pins every thread of this process to cpus; threads created
// later inherit the pinning. Restore gives every thread back the affinity
// it had (a thread created since, the process's): a run's pinning ends
// with the run. On error nothing stays pinned.
func PinProcess(cpus []int) (restore func() error, err error) {
	tids, err := threads()
	if err != nil {
		return nil, fmt.Errorf("pin client to CPUs %s: list threads: %w", FormatList(cpus), err)
	}
	saved := map[int]unix.CPUSet{}
	var process unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &process); err != nil {
		return nil, fmt.Errorf("pin client to CPUs %s: read the process's affinity: %w", FormatList(cpus), err)
	}
	restore = func() error {
		now, err := threads()
		if err != nil {
			return fmt.Errorf("restore CPU affinity: list threads: %w", err)
		}
		var errs []error
		for _, tid := range now {
			set, ok := saved[tid]
			if !ok {
				set = process
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				errs = append(errs, fmt.Errorf("restore CPU affinity of thread %d: %w", tid, err))
			}
		}
		return errors.Join(errs...)
	}
	set := cpuSet(cpus)
	for _, tid := range tids {
		var old unix.CPUSet
		if unix.SchedGetaffinity(tid, &old) == nil {
			saved[tid] = old
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return nil, errors.Join(fmt.Errorf("pin client thread %d to CPUs %s: %w", tid, FormatList(cpus), err), restore())
		}
	}
	return restore, nil
}

// threads lists this process's thread IDs.
func threads() ([]int, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// Affinity reads back the CPUs pid (0: the calling thread) may run on.
func Affinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("read CPU affinity of pid %d: %w", pid, err)
	}
	var out []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Command wraps bin and args so that the program starts pinned to cpus
// (with taskset, so that every thread it creates inherits the pinning). With
// no cpus it returns bin and args unchanged.
func Command(cpus []int, bin string, args []string) (string, []string, error) {
	if len(cpus) == 0 {
		return bin, args, nil
	}
	taskset, err := exec.LookPath("taskset")
	for _, p := range []string{"/usr/bin/taskset", "/bin/taskset"} { // PATH may lack it, or be empty
		if err == nil {
			break
		}
		if _, serr := os.Stat(p); serr == nil {
			taskset, err = p, nil
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("pin %s to CPUs %s: taskset not found on PATH or in /usr/bin (apt-get install util-linux)", bin, FormatList(cpus))
	}
	return taskset, append([]string{"-c", FormatList(cpus), bin}, args...), nil
}
