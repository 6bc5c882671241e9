package containers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	tc "github.com/testcontainers/testcontainers-go"
)

// maxExecOutput is how much of a command's output in a container dbsock
// keeps: its end, where a failure says why. The rest is read and dropped.
const maxExecOutput = 64 << 10

// execExitWait bounds the wait for the engine to mark a command whose
// output has ended as exited.
const execExitWait = 10 * time.Second

// execBounded runs cmd in the container id and waits for it: its exit
// code and the last maxExecOutput bytes of its output (stdout and stderr
// as they came), never more in memory, whatever the command writes.
// (testcontainers' own Exec keeps the whole output.)
func execBounded(ctx context.Context, id string, cmd []string) (int, io.Reader, error) {
	cli, err := tc.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("connect to the Docker engine to run %s in container %s: %w", cmd[0], id, err)
	}
	defer cli.Close()
	created, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return 0, nil, fmt.Errorf("container exec create: %w", err)
	}
	hijack, err := cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, nil, fmt.Errorf("container exec attach: %w", err)
	}
	defer hijack.Close()
	out := &tail{max: maxExecOutput}
	drained := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, hijack.Reader)
		drained <- err
	}()
	select {
	case err := <-drained:
		if err != nil {
			return 0, nil, fmt.Errorf("container exec read: %w", err)
		}
	case <-ctx.Done():
		hijack.Close()
		return 0, nil, ctx.Err()
	}
	// The engine marks the command exited a moment after its output ends.
	ctx, cancel := context.WithTimeout(ctx, execExitWait)
	defer cancel()
	for {
		st, err := cli.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
		if err != nil {
			return 0, nil, fmt.Errorf("container exec inspect: %w", err)
		}
		if !st.Running {
			return st.ExitCode, bytes.NewReader(out.bytes()), nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("container exec inspect: %s still running %s after its output ended: %w", cmd[0], execExitWait, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tail) bytes() []byte { return t.buf }
