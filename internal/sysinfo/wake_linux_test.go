package sysinfo

import (
	"os"
	"strconv"
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

// TestWakeCostsGiveTheirThreadsBack: when wakeCosts returns, no thread of
// the process is left pinned by it (a thread still pinned then was
// recorded pinned by the client's pinning, which put it back there when
// the run ended: the process was left on one CPU).
func TestWakeCostsGiveTheirThreadsBack(t *testing.T) {
	var want unix.CPUSet
	if err := unix.SchedGetaffinity(0, &want); err != nil || want.Count() < 2 {
		t.Skip("needs two CPUs")
	}
	for range 20 {
		wakeCosts()
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			tid, _ := strconv.Atoi(task.Name())
			var got unix.CPUSet
			if unix.SchedGetaffinity(tid, &got) == nil && got != want {
				t.Fatalf("thread %d left on %d CPUs after wakeCosts, want %d", tid, got.Count(), want.Count())
			}
		}
	}
}
