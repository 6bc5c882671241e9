//go:build !linux

package supply

import "syscall"

// procAttr starts a server in its own process group, as runAs when set.
// This OS has no Pdeathsig: a server outlives a dbsock killed with
// SIGKILL, and "dbsock clean" removes it.
func procAttr(runAs *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: runAs}
}
