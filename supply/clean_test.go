package supply

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestAliveCountsAZombieAsDead(t *testing.T) {
	if !alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	if !alive(pid) {
		t.Fatal("a running child is not alive")
	}
	// Killed and not yet reaped: a zombie, as a SIGKILLed dbsock is until
	// its parent waits for it.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !zombie(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatal("a zombie counts as alive")
	}
	cmd.Wait()
	if alive(pid) {
		t.Fatal("a reaped process counts as alive")
	}
}

// TestProcessesUsingMatchesWholePaths: a leftover dir's name that is a
// prefix of a live run's dir does not match the live run's processes.
func TestProcessesUsingMatchesWholePaths(t *testing.T) {
	base := t.TempDir()
	dead, live := filepath.Join(base, "dbsock-148526566"), filepath.Join(base, "dbsock-1485265666")
	for _, d := range []string{dead, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", "sleep 30", "--datadir="+live+"/data")
	cmd.Dir = live
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if pids := processesUsing(dead); slices.Contains(pids, cmd.Process.Pid) {
		t.Fatalf("the live run's process %d matched the dead run's dir %s", cmd.Process.Pid, dead)
	}
	if pids := processesUsing(live); !slices.Contains(pids, cmd.Process.Pid) {
		t.Fatalf("the process %d running in %s did not match it", cmd.Process.Pid, live)
	}
	for _, tt := range []struct {
		arg  string
		want bool
	}{{live, true}, {live + "/x.sock", true}, {"--datadir=" + live + "/d", true}, {"file:" + live + "/", true},
		{live + "0", false}, {"x" + live, false}, {live + "7/y", false}} {
		if got := argNames("bin\x00"+tt.arg, live); got != tt.want {
			t.Errorf("argNames(%q) = %v", tt.arg, got)
		}
	}
}
