package drivers

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dialInNetns enters netns on a thread of its own, dials, and goes back
// (the pattern of vishvananda/netns): the socket belongs to the namespace
// it was made in. A thread that cannot go back is never reused: it stays
// locked and ends with its goroutine.
func dialInNetns(ctx context.Context, d *net.Dialer, netns, network, addr string) (net.Conn, error) {
	target, err := os.Open(netns)
	if err != nil {
		return nil, fmt.Errorf("open the network namespace %s to dial %s from: %w (the container that owns it is gone, or dbsock lacks the privilege to enter it: run as root)", netns, addr, err)
	}
	defer target.Close()
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, fmt.Errorf("open this thread's network namespace: %w", err)}
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, fmt.Errorf("enter the network namespace %s to dial %s: %w (it needs CAP_SYS_ADMIN: run as root)", netns, addr, err)}
			return
		}
		c, err := d.DialContext(ctx, network, addr)
		if berr := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); berr != nil {
			if c != nil {
				c.Close()
			}
			done <- result{nil, fmt.Errorf("leave the network namespace %s: %w", netns, berr)}
			return // still locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// Capabilities a process needs to dial from another container's network
// namespace: CAP_SYS_PTRACE to open another user's /proc/PID/ns/net, and
// CAP_SYS_ADMIN to enter it.
const (
	capSysPtrace = 19
	capSysAdmin  = 21
)

// CanEnterNetns says whether this process may dial from another
// container's network namespace (the service and pod paths), and why not:
// it needs CAP_SYS_ADMIN and CAP_SYS_PTRACE in effect, as root has them.
func CanEnterNetns() (bool, string) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false, "this process cannot read its own capabilities: " + err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hex, ok := strings.CutPrefix(sc.Text(), "CapEff:")
		if !ok {
			continue
		}
		caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			return false, "this process's capabilities do not read: " + err.Error()
		}
		if caps&(1<<capSysAdmin) == 0 || caps&(1<<capSysPtrace) == 0 {
			return false, "entering another container's network namespace takes CAP_SYS_ADMIN and CAP_SYS_PTRACE (root has them), and this process has not both"
		}
		return true, ""
	}
	return false, "this process's capabilities are not in /proc/self/status"
}
