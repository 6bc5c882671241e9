package placement

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Supported says whether this OS lets dbsock pin threads to CPUs.
const Supported = true

// ErrNoAffinity is what pinning says where the OS has no CPU affinity.
var ErrNoAffinity = errors.New("not available: no CPU affinity")

func cpuSet(cpus []int) *unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return &set
}

// pinned is this process's pinning while runs hold it: runs that overlap
// (concurrent dbsock.Compare calls) share one pinning, and the last to end
// restores what was there before the first.
var pinned struct {
	sync.Mutex
	holders int
	cpus    []int
	restore func() error
}

// PinProcess pins every thread of this process to cpus; threads created
// later inherit the pinning. Restore gives every thread back the affinity
// it had (a thread created since, the process's) once the last run that
// holds the pinning ends: a run's pinning ends with the run, even when
// runs overlap. A run that asks for other CPUs while one holds the
// pinning is refused. On error nothing stays pinned.
func PinProcess(cpus []int) (restore func() error, err error) {
	pinned.Lock()
	defer pinned.Unlock()
	if pinned.holders > 0 && !slices.Equal(pinned.cpus, cpus) {
		return nil, fmt.Errorf("pin client to CPUs %s: another run in this process holds it pinned to CPUs %s; runs that overlap must share the client's CPUs", FormatList(cpus), FormatList(pinned.cpus))
	}
	if pinned.holders == 0 {
		r, err := pinThreads(cpus)
		if err != nil {
			return nil, err
		}
		pinned.cpus, pinned.restore = slices.Clone(cpus), r
	}
	pinned.holders++
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			pinned.Lock()
			defer pinned.Unlock()
			if pinned.holders--; pinned.holders == 0 {
				err = pinned.restore()
			}
		})
		return err
	}, nil
}

// pinThreads pins every thread now, and returns how to undo it.
func pinThreads(cpus []int) (restore func() error, err error) {
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

// PinTree pins every thread of each process of pids to cpus (nil: every
// CPU this process may use): a server's processes, re-pinned between
// the placements of a run. A process or thread that ended meanwhile is
// no error.
func PinTree(pids []int, cpus []int) error {
	if len(cpus) == 0 {
		var err error
		if cpus, err = Affinity(0); err != nil {
			return err
		}
	}
	set := cpuSet(cpus)
	var errs []error
	for _, pid := range pids {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue // it ended
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				errs = append(errs, fmt.Errorf("pin thread %d of pid %d to CPUs %s: %w", tid, pid, FormatList(cpus), err))
			}
		}
	}
	return errors.Join(errs...)
}
