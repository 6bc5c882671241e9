package cpustat

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestDescendantsFindsTheWholeTree(t *testing.T) {
	// sh starts two sleeps: the tree is sh and both.
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if pids, err = Descendants(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if len(pids) == 3 {
			break
		}
	}
	if len(pids) != 3 || pids[0] != cmd.Process.Pid {
		t.Fatalf("tree of %d: %v, want it and its two children", cmd.Process.Pid, pids)
	}
	tree := NewTree(cmd.Process.Pid, "test tree")
	if _, err := tree.Read(); err != nil {
		t.Fatal(err)
	}
	if _, err := Descendants(1 << 30); err == nil {
		t.Fatal("a missing process has descendants")
	}
}

// TestSelfCountsWork: what Self reads grows with the CPU this process
// spends, as the kernel's own count for it (getrusage) says: the loop
// spins until getrusage has seen 50 ms, however long a busy machine takes
// to give it them, within 10 s.
func TestSelfCountsWork(t *testing.T) {
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	a, err := Self{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	from, x := used(), 0
	for deadline := time.Now().Add(10 * time.Second); used()-from < 50*time.Millisecond && time.Now().Before(deadline); {
		x++
	}
	b, _ := Self{}.Read()
	// Self reads /proc in clock ticks (10 ms): allow two.
	if d := b.Sub(a); d.CPUNs < int64(30*time.Millisecond) {
		t.Fatalf("50 ms of CPU by getrusage counted as %d ns (x=%d)", d.CPUNs, x)
	}
	if d := a.Sub(b); d != (Sample{HasWait: true}) {
		t.Fatalf("a backwards difference must clamp to zero: %+v", d)
	}
}

// TestTreeReadsRunQueueWait: a process tree's time waiting for a CPU is
// read from its threads' schedstat: a busy child and a busy sibling on
// one CPU wait for each other, so the child's wait grows.
func TestTreeReadsRunQueueWait(t *testing.T) {
	if !procfs {
		t.Skip("schedstat is Linux's")
	}
	one := []string{"sh", "-c", "while :; do :; done"}
	spin := func() *exec.Cmd {
		c := exec.Command("taskset", append([]string{"-c", "0"}, one...)...)
		if err := c.Start(); err != nil {
			t.Skip("taskset:", err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	child, _ := spin(), spin()
	time.Sleep(20 * time.Millisecond)
	tree := NewTree(child.Process.Pid, "a busy shell")
	a, err := tree.Read()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	b, err := tree.Read()
	if err != nil {
		t.Fatal(err)
	}
	if d := b.Sub(a); !d.HasWait || d.WaitNs < int64(50*time.Millisecond) {
		t.Errorf("a shell sharing its CPU with another for 300 ms waited %d ns for it (read: %v)", d.WaitNs, d.HasWait)
	}
}

func TestListeningPID(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pid, err := ListeningPID(l.Addr().(*net.TCPAddr).Port)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("listener of this process's port: %d, %v; want %d", pid, err, os.Getpid())
	}
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l2.Addr().(*net.TCPAddr).Port
	l2.Close()
	if _, err := ListeningPID(port); err == nil {
		t.Fatal("a closed port has a listener")
	}
}
