package containers

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/dbsock/dbsock/supply"
)

// An agent in dbsock's client container (supply.ClientContainer.AgentArgv)
// is started as every agent is, as a process of this host under the
// agents' keeper, with pipes for its stdin and stdout: that process is
// this binary again, re-executed as the bridge below, which runs the
// agent's command in the container (an exec with its stdin attached)
// and copies its stdin there and the command's stdout and stderr back.
// When the bridge ends (the keeper ends it with the run), the engine
// closes the command's stdin, and dbsock's agent ends on it.

// markEnv is agents.MarkEnv: only an agent's process is a bridge.
const markEnv = "DBSOCK_AGENT_OF"

func init() {
	if len(os.Args) < 5 || os.Args[1] != supply.AgentExecArg || os.Getenv(markEnv) == "" {
		return
	}
	os.Exit(bridge(os.Args[2], os.Args[3], os.Args[4:]))
}

// bridge runs cmd in container id on the engine at socket, its stdin this
// process's, its stdout and stderr to this process's, and returns its exit
// status (125 when it could not be run).
func bridge(socket, id string, cmd []string) int {
	err := runAttached(context.Background(), socket, id, cmd)
	if exit, ok := err.(exitStatus); ok {
		return int(exit) // the agent said why on its stderr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dbsock: run %s in the client container %s: %v\n", cmd[0], shortID(id), err)
		return 125
	}
	return 0
}

type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exited with status %d", int(e)) }

func shortID(id string) string { return id[:min(len(id), 12)] }

func runAttached(ctx context.Context, socket, id string, cmd []string) error {
	cli, err := client.New(client.WithHost("unix://" + socket))
	if err != nil {
		return fmt.Errorf("connect to the Docker engine at %s: %w", socket, err)
	}
	defer cli.Close()
	created, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdin: true, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return fmt.Errorf("container exec create: %w", err)
	}
	att, err := cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return fmt.Errorf("container exec attach: %w", err)
	}
	defer att.Close()
	go func() {
		_, _ = io.Copy(att.Conn, os.Stdin)
		_ = att.CloseWrite() // dbsock closed the agent's stdin: so does the engine the command's
	}()
	if _, err := stdcopy.StdCopy(os.Stdout, os.Stderr, att.Reader); err != nil {
		return fmt.Errorf("container exec read: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, execExitWait)
	defer cancel()
	for {
		st, err := cli.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
		if err != nil {
			return fmt.Errorf("container exec inspect: %w", err)
		}
		if !st.Running {
			if st.ExitCode != 0 {
				return exitStatus(st.ExitCode)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still running %s after its output ended", execExitWait)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
