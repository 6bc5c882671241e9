package supply

import "syscall"

// procAttr starts a server in its own process group, as runAs when set,
// and has the kernel kill it if dbsock dies (Pdeathsig).
func procAttr(runAs *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: runAs}
}
