//go:build !linux

package agents

import (
	"syscall"
	"time"
)

// MarkEnv is the variable that marks an agent's processes in their
// environment: its value is the dbsock run's supply.Owner (no secret).
const MarkEnv = "DBSOCK_AGENT_OF"

// procAttr puts the agent in a process group of its own, which dbsock
// kills whole.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// launch runs argv itself: there is no keeper here (dbsock removes tmp).
func launch(path string, argv, env []string, tmp string) (string, []string, []string) {
	return path, argv, env
}

func startProcess(start func() error) error { return start() }

// stop kills the agent's process group.
func stop(pid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
	}
}
