package placement

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
)

// CPU is one logical CPU and where it sits.
type CPU struct {
	ID      int
	Core    int // core_id within its package
	Package int // physical_package_id
	Node    int // NUMA node
}

// MinAutoSplit is the fewest logical CPUs on which auto puts client and
// servers on two physical cores; below it they share one CPU.
const MinAutoSplit = 4

// ReadTopology reads the machine's CPUs that this process's cgroup may use,
// with their cores, packages and NUMA nodes, from sysfs. It reads the
// machine, not the calling thread's affinity, so that an earlier pinning
// in the same process (an earlier run, a test) does not shrink it.
func ReadTopology() ([]CPU, error) {
	allowed, err := Available()
	if err != nil {
		return nil, err
	}
	out := make([]CPU, 0, len(allowed))
	for _, id := range allowed {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d", id)
		c := CPU{ID: id, Core: readInt(dir+"/topology/core_id", id), Package: readInt(dir+"/topology/physical_package_id", 0)}
		if nodes, _ := filepath.Glob(dir + "/node[0-9]*"); len(nodes) > 0 {
			c.Node, _ = strconv.Atoi(strings.TrimPrefix(filepath.Base(nodes[0]), "node"))
		}
		out = append(out, c)
	}
	return out, nil
}

// readInt reads a small integer file, or returns def when it cannot.
func readInt(path string, def int) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return def
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return def
	}
	return v
}

// Choose is --placement auto for the CPUs given: with at least
// MinAutoSplit of them, the client and the servers each get one logical
// CPU on two different physical cores of one NUMA node (never two SMT
// siblings, which share a core's execution units); with fewer, client and
// servers share one CPU, because on a small machine a server woken on the
// other CPU adds tens of microseconds per op and makes latencies bimodal.
// Reason says what was chosen and why.
func Choose(cpus []CPU) (Placement, error) {
	p := Placement{Mode: "auto"}
	if len(cpus) == 0 {
		return p, setting.Err("%s auto: this process may run on no CPU", setting.Placement)
	}
	sorted := append([]CPU(nil), cpus...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	if len(sorted) < MinAutoSplit {
		c := sorted[0].ID
		p.Client, p.Server = []int{c}, []int{c}
		p.Reason = fmt.Sprintf("auto: %d logical CPUs (fewer than %d), so client and servers share CPU %d: on a machine this small, "+
			"waking a server on another CPU costs more than the transport difference and makes latencies bimodal", len(sorted), MinAutoSplit, c)
		return p, nil
	}
	type coreKey struct{ pkg, core int }
	byNode := map[int][]CPU{} // one CPU (the lowest) per physical core
	seen := map[coreKey]bool{}
	for _, c := range sorted {
		k := coreKey{c.Package, c.Core}
		if !seen[k] {
			seen[k] = true
			byNode[c.Node] = append(byNode[c.Node], c)
		}
	}
	best := -1
	for node, cores := range byNode {
		if len(cores) >= 2 && (best < 0 || len(cores) > len(byNode[best]) || (len(cores) == len(byNode[best]) && node < best)) {
			best = node
		}
	}
	if best < 0 {
		c := sorted[0].ID
		p.Client, p.Server = []int{c}, []int{c}
		p.Reason = fmt.Sprintf("auto: %d logical CPUs but no NUMA node with two physical cores, so client and servers share CPU %d", len(sorted), c)
		return p, nil
	}
	cores := byNode[best]
	if len(cores) >= 3 && cores[0].ID == 0 {
		cores = cores[1:] // CPU 0 does the most housekeeping (timers, interrupts)
	}
	p.Client, p.Server = []int{cores[0].ID}, []int{cores[1].ID}
	p.Reason = fmt.Sprintf("auto: %d logical CPUs, so the client runs on CPU %d and the servers on CPU %d: two physical cores of NUMA node %d, not SMT siblings",
		len(sorted), cores[0].ID, cores[1].ID, best)
	return p, nil
}

// ChooseAtRate is --placement auto for a run at a rate (an open loop):
// as Choose with MinAutoSplit CPUs or more; with two or three, the client
// on the lowest CPU and the servers on the next, so that the generator's
// waiting and wake-ups never take a CPU a server needs: at a rate the
// server's capacity (its CPU per op) is what is measured, and a server
// woken on its own CPU is what an application at load sees. On one CPU
// they share it.
func ChooseAtRate(cpus []CPU) (Placement, error) {
	if len(cpus) < 2 || len(cpus) >= MinAutoSplit {
		return Choose(cpus)
	}
	sorted := append([]CPU(nil), cpus...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	c, s := sorted[0], sorted[1]
	p := Placement{Mode: "auto", Client: []int{c.ID}, Server: []int{s.ID}}
	p.Reason = fmt.Sprintf("auto at a rate: %d logical CPUs, so the client runs on CPU %d and the servers on CPU %d: an open loop's generator keeps off the servers' CPU",
		len(sorted), c.ID, s.ID)
	if c.Package == s.Package && c.Core == s.Core {
		p.Reason += " (the two are SMT siblings of one core)"
	}
	return p, nil
}

// sysfs is where the machine's CPU topology is read (a test's fake tree
// replaces it).
var sysfs = "/sys"

// Available lists the online CPUs (sysfs devices/system/cpu/online) that
// this process's cgroup cpuset allows (cgroup v2 cpuset.cpus.effective, or
// v1 cpuset.effective_cpus); when sysfs cannot be read, the calling
// thread's affinity.
func Available() ([]int, error) {
	online, err := readList(sysfs + "/devices/system/cpu/online")
	if err != nil {
		return Affinity(0)
	}
	if allowed := cgroupCPUs(); len(allowed) > 0 {
		var both []int
		for _, c := range online {
			if containsInt(allowed, c) {
				both = append(both, c)
			}
		}
		if len(both) > 0 {
			return both, nil
		}
	}
	return online, nil
}

// cgroupCPUs is this process's cgroup cpuset, or nil when none is found.
func cgroupCPUs() []int {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	return cgroupCPUsOf(string(b))
}

// cgroupCPUsOf is cgroupCPUs for a process whose /proc/PID/cgroup reads
// cgroups.
func cgroupCPUsOf(cgroups string) []int {
	for _, line := range strings.Split(strings.TrimSpace(cgroups), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, file string
		switch {
		case f[0] == "0" && f[1] == "":
			dir, file = filepath.Join(sysfs, "fs/cgroup"), "cpuset.cpus.effective"
		case strings.Contains(","+f[1]+",", ",cpuset,"):
			dir, file = filepath.Join(sysfs, "fs/cgroup/cpuset"), "cpuset.effective_cpus"
		default:
			continue
		}
		// The process's own cgroup, at its path; inside a container
		// the hierarchy is mounted at the container's own cgroup, and
		// /proc/self/cgroup names it by its path on the host: then the
		// mount's root is the container's cgroup.
		for _, path := range []string{filepath.Join(dir, f[2], file), filepath.Join(dir, file)} {
			if cpus, err := readList(path); err == nil && len(cpus) > 0 {
				return cpus
			}
		}
	}
	return nil
}

func readList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseList(strings.TrimSpace(string(b)), 1<<16)
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ChooseBoth is --placement auto for a run at rest on a machine of two
// CPUs or more: the two placements its applications meet, each measured
// in turn. Most applications run beside their database on other CPUs of
// one host (split: Choose's two physical cores with MinAutoSplit CPUs or
// more, else the two lowest CPUs); some share one CPU with it (shared: a
// CPU-limited pod with a sidecar, a small machine). The two give
// different answers on some hosts (a server woken on another CPU of a
// virtual machine pays an inter-processor interrupt per op), and a
// verdict under one that the other contradicts must be said: so auto
// measures both. With one CPU it is Choose's one placement.
func ChooseBoth(cpus []CPU) ([]Placement, error) {
	if len(cpus) < 2 {
		p, err := Choose(cpus)
		return []Placement{p}, err
	}
	split, err := Choose(cpus)
	if err != nil {
		return nil, err
	}
	if len(cpus) < MinAutoSplit { // Choose shares one CPU there
		sorted := append([]CPU(nil), cpus...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
		split.Client, split.Server = []int{sorted[0].ID}, []int{sorted[1].ID}
	}
	if split.Server[0] == split.Client[0] { // no two physical cores in one NUMA node: Choose shares one
		return []Placement{split}, nil
	}
	c, s := split.Client[0], split.Server[0]
	shared := Placement{Mode: "same", Client: []int{c}, Server: []int{c},
		Reason: fmt.Sprintf("auto: %d logical CPUs, so each case is measured placed shared (client and servers on CPU %d) and split (client on CPU %d, servers on CPU %d), taking turns", len(cpus), c, c, s)}
	split.Mode, split.Reason = "split", shared.Reason
	return []Placement{shared, split}, nil
}

// ResolveAuto is --placement auto at rest on this machine: ChooseBoth's
// placements, or Resolve's one where the OS has no CPU affinity.
func ResolveAuto() ([]Placement, error) {
	if !Supported {
		p, err := Resolve("auto", "", "")
		return []Placement{p}, err
	}
	cpus, err := ReadTopology()
	if err != nil {
		return nil, err
	}
	return ChooseBoth(cpus)
}
