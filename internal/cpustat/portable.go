package cpustat

// Where there is no /proc (macOS), a process tree's CPU time comes from
// gopsutil (github.com/shirou/gopsutil/v4/process: proc_pidinfo's task info
// on macOS, without cgo), and its descendants from the parent pid of every
// process. The OS does not give context switches or read/write calls per
// process there: such a Sample says so (NoSwitches), and the report leaves
// those columns empty rather than print zeros.

import (
	"fmt"

	"github.com/shirou/gopsutil/v4/process"
)

// portableDescendants returns root and every process below it.
func portableDescendants(root int) ([]int, error) {
	if ok, err := process.PidExists(int32(root)); err != nil || !ok {
		return nil, fmt.Errorf("process %d: not running (%v)", root, err)
	}
	procs, err := process.Processes()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, p := range procs {
		if ppid, err := p.Ppid(); err == nil {
			children[int(ppid)] = append(children[int(ppid)], int(p.Pid))
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// portableRead sums the CPU time (user and system) of pids; a process
// other than the first that has ended is skipped.
func portableRead(pids []int) (Sample, error) {
	s := Sample{NoSwitches: true}
	for i, pid := range pids {
		p, err := process.NewProcess(int32(pid))
		if err != nil && i == 0 {
			return s, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
		}
		if err != nil {
			continue
		}
		t, err := p.Times()
		if err != nil && i == 0 {
			return s, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
		}
		if err != nil {
			continue
		}
		s.CPUNs += int64((t.User + t.System) * 1e9)
	}
	return s, nil
}
