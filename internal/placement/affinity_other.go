//go:build !linux

package placement

import (
	"fmt"
	"runtime"
)

// Supported says whether this OS lets dbsock pin threads to CPUs: not
// here (macOS has thread affinity tags only, advisory, and none on Apple
// silicon).
const Supported = false

// ErrNoAffinity is what pinning says where the OS has no CPU affinity.
var ErrNoAffinity = fmt.Errorf("not available: %s has no CPU affinity", osName())

func osName() string {
	if runtime.GOOS == "darwin" {
		return "macOS"
	}
	return runtime.GOOS
}

// PinProcess fails: there is no CPU affinity here.
func PinProcess(cpus []int) (restore func() error, err error) {
	return nil, fmt.Errorf("pin client to CPUs %s: %w", FormatList(cpus), ErrNoAffinity)
}

// Affinity fails: there is no CPU affinity here.
func Affinity(pid int) ([]int, error) {
	return nil, fmt.Errorf("read CPU affinity of pid %d: %w", pid, ErrNoAffinity)
}

// Command returns bin and args as they are with no cpus, and fails with
// some: nothing can be pinned here.
func Command(cpus []int, bin string, args []string) (string, []string, error) {
	if len(cpus) == 0 {
		return bin, args, nil
	}
	return "", nil, fmt.Errorf("pin %s to CPUs %s: %w", bin, FormatList(cpus), ErrNoAffinity)
}

// PinTree fails: there is no CPU affinity here.
func PinTree(pids []int, cpus []int) error {
	return fmt.Errorf("pin processes %v to CPUs %s: %w", pids, FormatList(cpus), ErrNoAffinity)
}
