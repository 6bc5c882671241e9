package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// swapRemote is the in-process client of inProcess, with someone who puts
// a symlink to victim in the place of the heartbeat file as soon as it is
// made.
type swapRemote struct {
	inProcess
	victim  string
	swapped chan struct{}
}

func (r *swapRemote) Exec(ctx context.Context, args ...string) error {
	alive := args[1] + ".out" + aliveSuffix
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Lstat(alive); err == nil {
				os.Remove(alive)
				if os.Symlink(r.victim, alive) == nil {
					close(r.swapped)
				}
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return r.inProcess.Exec(ctx, args...)
}

// TestHeartbeatFollowsNoSymlink: dbsock measure rewrites its heartbeat in
// the file it made, never through a symlink put at its name later (the
// file a symlink points at keeps its content).
func TestHeartbeatFollowsNoSymlink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	tgt, _ := targets.Lookup("remote-fake")
	remote := &swapRemote{victim: victim, swapped: make(chan struct{})}
	// Unix ops of 6 ms make a case of more than a heartbeat: the
	// heartbeat is rewritten after the swap.
	pl := Plan{Provider: passwordProvider{&fakeProvider{}}, ProviderName: "fake", Targets: []*targets.Target{tgt},
		Loop: scenarios.Settings{N: 200, Warmup: 1, Rounds: 1}, Instances: 1,
		Settings: map[string]targets.Settings{"remote-fake": &remoteSettings{UnixUS: 6000}},
		Client: ClientSide{Place: "container", Remote: func(context.Context, string, []string) (Remote, error) {
			return remote, nil
		}}}
	if _, err := Run(context.Background(), pl); err != nil {
		t.Fatal(err)
	}
	select {
	case <-remote.swapped:
	default:
		t.Fatal("the heartbeat file was never swapped for a symlink: the test tested nothing")
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine" {
		t.Errorf("the file a symlink at the heartbeat's name points at now holds %q, want %q", b, "mine")
	}
}
