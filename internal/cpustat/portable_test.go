package cpustat

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTreeWithoutProc reads a process tree the way dbsock does where there
// is no /proc (macOS): gopsutil for CPU time and parents. Here it runs on
// Linux against the same processes /proc describes, so both must agree.
func TestTreeWithoutProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("compares with /proc")
	}
	// sh spins for a while, then waits on a sleep: the tree is sh and it.
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	root := cmd.Process.Pid
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) != 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if pids, err = portableDescendants(root); err != nil {
			t.Fatal(err)
		}
	}
	if len(pids) != 2 || pids[0] != root {
		t.Fatalf("tree of %d without /proc: %v, want it and its sleep", root, pids)
	}
	procfs = false
	defer func() { procfs = true }()
	tree := NewTree(root, "test tree")
	got, err := tree.Read()
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadProcess(root)
	if err != nil {
		t.Fatal(err)
	}
	if !got.NoSwitches || got.Voluntary != 0 {
		t.Errorf("sample %+v: want context switches marked as not counted", got)
	}
	// gopsutil reads clock ticks (10 ms) where /proc's schedstat has ns.
	if d := got.CPUNs - want.CPUNs; got.CPUNs < int64(20*time.Millisecond) || d > int64(30*time.Millisecond) || d < -int64(30*time.Millisecond) {
		t.Errorf("CPU time without /proc %v, with /proc %v", time.Duration(got.CPUNs), time.Duration(want.CPUNs))
	}
	if !strings.Contains(tree.Describe(), "gopsutil") {
		t.Errorf("Describe = %q, want it to say how it reads", tree.Describe())
	}
	if s := got.Sub(Sample{}); !s.NoSwitches {
		t.Error("a difference of samples lost NoSwitches")
	}
	if _, err := portableDescendants(1 << 30); err == nil {
		t.Error("a missing process has descendants")
	}
}
