package compose

import (
	"os"
	"os/exec"
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
