package supply

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestOwnerRecordsItsNamespaceAndContainer(t *testing.T) {
	me := Self()
	if me.PIDNS == 0 {
		t.Fatalf("Self() = %+v: no PID namespace", me)
	}
	withContainer := me
	withContainer.Container = strings.Repeat("ab", 32)
	for _, o := range []Owner{me, withContainer, {PID: 7, Start: 9}} {
		got, err := ParseOwner(o.String())
		if err != nil || got != o {
			t.Errorf("ParseOwner(%q) = %+v, %v; want %+v", o.String(), got, err, o)
		}
	}
	for _, bad := range []string{"1 2 b pidns=x", "1 2 b container=short", "1 2 b container=" + strings.Repeat("G", 64)} {
		if _, err := ParseOwner(bad); err == nil {
			t.Errorf("ParseOwner(%q) took it", bad)
		}
	}
}

// nestedSleeper starts a process as pid 1 of a PID namespace of its own
// (a run inside a container, as the host sees it) and returns its owner
// record as that process would write it, and its pid here.
func nestedSleeper(t *testing.T) (Owner, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("unshare", "--pid", "--fork", "--kill-child", "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("unshare: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	children := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "task", strconv.Itoa(cmd.Process.Pid), "children")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(children)
		if f := strings.Fields(string(b)); len(f) == 1 {
			pid, _ := strconv.Atoi(f[0])
			start, err1 := startTime(pid)
			ns, err2 := pidNamespace(f[0])
			if ns == Self().PIDNS {
				time.Sleep(10 * time.Millisecond) // not yet in its namespace
				continue
			}
			if err1 != nil || err2 != nil {
				t.Skipf("read the nested process: %v %v", err1, err2)
			}
			return Owner{PID: 1, Start: start, Boot: Self().Boot, PIDNS: ns}, cmd
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Skip("unshare started no process in a PID namespace of its own (not permitted here?)")
	return Owner{}, nil
}

// TestJudgeOwners: what clean may remove is only what an owner shown dead
// left; an owner in a PID namespace it cannot see, and cannot show
// dead, is unknown.
func TestJudgeOwners(t *testing.T) {
	ctx := context.Background()
	me := Self()
	if me.PIDNS != initPIDNS {
		t.Skip("not in the host's PID namespace")
	}
	nested, sleeper := nestedSleeper(t)
	reused := me
	reused.Start++
	rebooted := me
	rebooted.Boot = "00000000-0000-0000-0000-000000000000"
	inContainerGone := Owner{PID: 1, Start: 5, Boot: me.Boot, PIDNS: 4026599999}
	unseen := inContainerGone
	onHost := me // an owner on the host, judged from inside a container
	for _, c := range []struct {
		name     string
		o        Owner
		self     uint64 // the judging process's PID namespace
		complete bool
		want     Liveness
	}{
		{"this process", me, me.PIDNS, true, OwnerAlive},
		{"its pid, started at another time", reused, me.PIDNS, true, OwnerDead},
		{"another boot", rebooted, me.PIDNS, true, OwnerDead},
		{"pid 1 of a live nested namespace, from the host", nested, initPIDNS, true, OwnerAlive},
		{"a nested namespace's pid gone, from the host", inContainerGone, initPIDNS, true, OwnerDead},
		{"the same, where /proc hides others' processes", inContainerGone, initPIDNS, false, OwnerUnknown},
		{"a namespace not below the judge's, no container", unseen, 4026500001, true, OwnerUnknown},
		{"the host's dbsock, judged from inside a container", onHost, 4026500001, true, OwnerUnknown},
	} {
		got, why := c.o.judge(ctx, "/nonexistent/docker.sock", c.self, c.complete)
		if got != c.want {
			t.Errorf("%s: %v (%s), want %v", c.name, got, why, c.want)
		}
		if got == OwnerUnknown && !strings.Contains(why, "run dbsock clean") {
			t.Errorf("%s: unknown, but it does not say what to do: %s", c.name, why)
		}
	}
	sleeper.Process.Kill()
	sleeper.Wait()
	// The namespace's pid 1 gets its SIGKILL as unshare dies: a moment later.
	got, why := nested.judge(ctx, "", initPIDNS, true)
	for deadline := time.Now().Add(5 * time.Second); got != OwnerDead && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		got, why = nested.judge(ctx, "", initPIDNS, true)
	}
	if got != OwnerDead {
		t.Errorf("pid 1 of a nested namespace after it was killed: %v (%s), want dead", got, why)
	}
}

// TestJudgeAsksTheEngineAboutTheOwnersContainer: an owner in a PID
// namespace the judge cannot see, that recorded its container, is dead
// once the engine no longer knows that container.
func TestJudgeAsksTheEngineAboutTheOwnersContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the Docker engine; skipped with -short")
	}
	ctx := context.Background()
	if ProbeEngine(ctx, 5*time.Second).Unusable() != "" {
		t.Skip("no Docker engine here")
	}
	o := Owner{PID: 1, Start: 5, Boot: Self().Boot, PIDNS: 4026599999, Container: strings.Repeat("0", 64)}
	if got, why := o.judge(ctx, DockerSocket(), 4026500001, true); got != OwnerDead || !strings.Contains(why, "gone") {
		t.Errorf("an owner whose container the engine does not know: %v (%s), want dead", got, why)
	}
}
