package agents

import "syscall"

// procAttr puts the agent in a process group of its own, which dbsock
// kills whole, and has the kernel kill it if dbsock dies first.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
