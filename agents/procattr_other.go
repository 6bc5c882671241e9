//go:build !linux

package agents

import "syscall"

// procAttr puts the agent in a process group of its own, which dbsock
// kills whole.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
