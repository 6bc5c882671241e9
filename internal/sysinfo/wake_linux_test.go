package sysinfo

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestWakeRoundTripOnACPUNotThere: a CPU the thread cannot be pinned to
// is an error at once, and nothing is left waiting on a pipe.
func TestWakeRoundTripOnACPUNotThere(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	cpu := 0
	for !set.IsSet(cpu) {
		cpu++
	}
	if ns, err := wakeRoundTrip(cpu, 1023); err == nil {
		t.Errorf("CPU 1023: %v ns, want an error", ns)
	}
	if ns, err := wakeRoundTrip(1023, cpu); err == nil {
		t.Errorf("CPU 1023 for the timing side: %v ns, want an error", ns)
	}
	if ns, err := wakeRoundTrip(cpu, cpu); err != nil || ns <= 0 {
		t.Errorf("CPU %d: %v ns, %v", cpu, ns, err)
	}
}
