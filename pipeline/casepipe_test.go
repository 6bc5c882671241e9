package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// peekingRemote is an inProcess client that, before it runs the case,
// reads every file in the case dir as another process of this user could,
// and records which hold the password and which are pipes.
type peekingRemote struct {
	inProcess
	holding, pipes []string
}

func (r *peekingRemote) Exec(ctx context.Context, args ...string) error {
	entries, err := os.ReadDir(r.dirs[0])
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(r.dirs[0], e.Name())
		if e.Type() == os.ModeNamedPipe {
			r.pipes = append(r.pipes, e.Name())
			continue
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("s3cret")) {
			r.holding = append(r.holding, e.Name())
		}
	}
	return r.inProcess.Exec(ctx, args...)
}

// TestCasePasswordsNeverOnDisk: the client gets each case's passwords
// through a pipe beside the case file; no file in the case dir ever holds
// one, while the client starts or after.
func TestCasePasswordsNeverOnDisk(t *testing.T) {
	tgt, _ := targets.Lookup("remote-fake")
	var remote *peekingRemote
	remotePassword = ""
	pl := Plan{Provider: passwordProvider{&fakeProvider{}}, ProviderName: "fake", Targets: []*targets.Target{tgt},
		Loop: scenarios.Settings{N: 50, Rounds: 1}, Instances: 1,
		Client: ClientSide{Place: "container", Remote: func(_ context.Context, target string, dirs []string) (Remote, error) {
			remote = &peekingRemote{inProcess: inProcess{dirs: dirs}}
			return remote, nil
		}}}
	if _, err := Run(context.Background(), pl); err != nil {
		t.Fatal(err)
	}
	if remotePassword != "s3cret" {
		t.Fatalf("the client opened its connections with password %q, want the endpoint's", remotePassword)
	}
	if len(remote.holding) > 0 {
		t.Errorf("files holding the password while the client starts: %v", remote.holding)
	}
	if len(remote.pipes) != 1 || filepath.Ext(remote.pipes[0]) != pipeSuffix {
		t.Errorf("pipes beside the case: %v, want one FILE%s", remote.pipes, pipeSuffix)
	}
}

// TestPasswordPipeRefusesAFile: a case whose password pipe is a regular
// file (not what dbsock run makes) is not read.
func TestPasswordPipeRefusesAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "case.json.pw")
	if err := os.WriteFile(f, []byte(`["x","y"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readPasswords(f); err == nil {
		t.Fatal("a regular file was read as the password pipe")
	}
}

// TestPasswordOfferEndsWithItsContext: a client that never opens the pipe
// leaves the offer waiting only until its context ends, and the pipe is
// removed.
func TestPasswordOfferEndsWithItsContext(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "case.json.pw")
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := offerPasswords(ctx, pipe, []string{"s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("offer ended with %v, want context.Canceled", err)
	}
	if _, err := os.Lstat(pipe); !os.IsNotExist(err) {
		t.Errorf("the pipe is still there (%v)", err)
	}
}
