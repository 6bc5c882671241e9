package supply

import (
	"fmt"
	"os"
	"strings"
)

// CPU cgroups. A container's processes run in a CPU cgroup of their own;
// dbsock's client runs in its own process's. Sharing one CPU, a server
// woken across two cgroups is scheduled as a group against the client
// rather than as a task beside it, and that changes the answer: measured
// on a 2-vCPU AMD EPYC guest (Linux 6.18, cgroup v1, client and a local
// SQL server on CPU 0), moving the same server process into a cpu cgroup
// of its own took its Unix p50 from 22.1 to 24.2 µs while TCP's went from 26.8 to
// 25.8 µs: the p50 speedup fell from 1.21 to 1.07, and back to 1.22 when it
// was moved back. So the report says where each ran.

// cgroupNote says, for a server whose first process is pid, that it runs
// in another CPU cgroup than dbsock ("" when both are in the same one, or
// when either cannot be read: off Linux, or a process already gone).
func cgroupNote(pid int) string { return CgroupNote(pid, 0) }

// CgroupNote is cgroupNote for a client that is process client (0: this
// process), such as dbsock's client container.
func CgroupNote(server, client int) string {
	self := "/proc/self/cgroup"
	if client > 0 {
		self = fmt.Sprintf("/proc/%d/cgroup", client)
	}
	serverGroup, err := cpuCgroup(fmt.Sprintf("/proc/%d/cgroup", server))
	if err != nil {
		return ""
	}
	clientGroup, err := cpuCgroup(self)
	if err != nil || clientGroup == serverGroup {
		return ""
	}
	return fmt.Sprintf("the server ran in CPU cgroup %s, the client in %s: on a shared CPU each wake-up crosses cgroups, "+
		"as between two containers (an application and its database), which can change the speedup (docs/containers.md: \"Containers and CPU cgroups\")", serverGroup, clientGroup)
}

// cpuCgroup reads the CPU controller's cgroup from a /proc/PID/cgroup file:
// the cgroup v1 line whose controllers include cpu, else the v2 line.
func cpuCgroup(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v2 := ""
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" && parts[0] == "0" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				return parts[2], nil
			}
		}
	}
	if v2 == "" {
		return "", fmt.Errorf("%s names no CPU cgroup", path)
	}
	return v2, nil
}
