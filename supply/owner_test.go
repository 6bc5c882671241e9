package supply

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestOwnerRoundTrip(t *testing.T) {
	me := Self()
	if me.PID != os.Getpid() || me.Start == 0 || me.Boot == "" {
		t.Fatalf("Self() = %+v", me)
	}
	got, err := ParseOwner(me.String() + "\n")
	if err != nil || got != me {
		t.Fatalf("ParseOwner(%q) = %+v, %v", me.String(), got, err)
	}
	if old, err := ParseOwner("4242\n"); err != nil || old != (Owner{PID: 4242}) {
		t.Fatalf("an older dbsock's bare pid: %+v, %v", old, err)
	}
	for _, bad := range []string{"", "x", "-3", "12 start"} {
		if _, err := ParseOwner(bad); err == nil {
			t.Errorf("ParseOwner(%q) took it", bad)
		}
	}
}

// TestOwnerAcrossPIDNamespaces: a dbsock that ran as pid 1 in a container
// is not taken for the host's pid 1 (always running), nor is a pid used
// again by another process, nor anything from an earlier boot; the live
// owner is alive.
func TestOwnerAcrossPIDNamespaces(t *testing.T) {
	me := Self()
	if !me.Alive() {
		t.Fatal("this very process is not alive")
	}
	hostInit, err := startTime(1)
	if err != nil {
		t.Skip(err)
	}
	inContainer := Owner{PID: 1, Start: hostInit + 1000, Boot: me.Boot}
	if inContainer.Alive() {
		t.Error("a container's pid 1 (another start time) is taken for the host's pid 1")
	}
	reused := me
	reused.Start++
	if reused.Alive() {
		t.Error("another process with this pid (another start time) is taken for the owner")
	}
	rebooted := me
	rebooted.Boot = "00000000-0000-0000-0000-000000000000"
	if rebooted.Alive() {
		t.Error("an owner from another boot is alive")
	}
	if (Owner{PID: 1}).Alive() != true {
		t.Error("a bare pid that runs (an older dbsock's owner file) is not alive")
	}
}

// TestCleanFindsContainerRunLeftovers: a temp dir whose owner file names
// pid 1 of a PID namespace (a run inside a CI container, killed) is a
// leftover on the host; one naming this process is not.
func TestCleanFindsContainerRunLeftovers(t *testing.T) {
	base := t.TempDir()
	hostInit, err := startTime(1)
	if err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(base, "dbsock-1")
	live := filepath.Join(base, "dbsock-2")
	for dir, owner := range map[string]Owner{dead: {PID: 1, Start: hostInit + 1000, Boot: Self().Boot}, live: Self()} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, OwnerFile), []byte(owner.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sleeper := exec.Command("sleep", "30")
	sleeper.Dir = dead
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	left, _, err := FindLeftovers(context.Background(), DockerSocket(), base)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, l := range left {
		if filepath.Dir(l.Dir) == base {
			dirs = append(dirs, l.Dir)
		}
	}
	if len(dirs) != 1 || dirs[0] != dead {
		t.Fatalf("leftovers %v, want only %s", dirs, dead)
	}
	for _, l := range left {
		if l.Dir == dead && (len(l.PIDs) != 1 || l.PIDs[0] != sleeper.Process.Pid) {
			t.Errorf("the leftover's processes are %v, want the one running in it (%d)", l.PIDs, sleeper.Process.Pid)
		}
	}
}
