// Package peercred reads which process is at the other end of a Unix
// socket, as the kernel says it.
package peercred

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// PeerPID is the process at the other end of c, a Unix socket, as the kernel
// says it (SO_PEERCRED), or 0.
func PeerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// ListenerPID is the process that listens on the Unix socket at path, as
// the kernel says it to a client (SO_PEERCRED: the credentials of the
// process that called listen), from a connection that sends nothing.
func ListenerPID(path string) (int, error) {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if pid := PeerPID(c); pid > 0 {
		return pid, nil
	}
	return 0, fmt.Errorf("the kernel gave no process for %s (SO_PEERCRED)", path)
}

// Name is pid's command name (/proc/PID/comm: at most 15 bytes), or "".
func Name(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
