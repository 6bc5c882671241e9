// Package sysinfo captures the client machine's environment for reports:
// OS, kernel, CPU, Go version and the versions of the client libraries
// compiled into dbsock.
package sysinfo

import (
	"context"
	"errors"
	"github.com/dbsock/dbsock/internal/placement"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Tool names the measuring program.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

// Environment describes the machine the client ran on.
type Environment struct {
	// Host is the run's label for the machine (dbsock run --host; the
	// hostname by default): a report of several files names each host by
	// it.
	Host      string `json:"host,omitempty"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	Kernel    string `json:"kernel"`
	CPUModel  string `json:"cpu_model"`
	NumCPU    int    `json:"num_cpu"`
	GoVersion string `json:"go_version"`
	// Virtualization is the hypervisor or container the client runs in
	// ("none" on bare metal, "" when unknown).
	Virtualization string `json:"virtualization,omitempty"`
	// Governor is the CPU frequency governor of CPU 0, where readable.
	Governor string `json:"cpu_governor,omitempty"`
	// Drivers maps each client library's module path to its version.
	Drivers map[string]string `json:"drivers,omitempty"`
	// CPU is the CPU's identity (family, model, stepping, microcode).
	CPU *CPUID `json:"cpu_id,omitempty"`
	// Vulnerabilities are the kernel's CPU vulnerabilities, each with its
	// state as /sys/devices/system/cpu/vulnerabilities/ says it ("Not
	// affected", "Mitigation: PTI", "Vulnerable: No microcode").
	Vulnerabilities map[string]string `json:"cpu_vulnerabilities,omitempty"`
	// KernelCmdline is the kernel's command line (/proc/cmdline).
	KernelCmdline string `json:"kernel_cmdline,omitempty"`
	// SyscallNs is what one system call (getppid) cost on this host, in
	// ns, measured at the start of the run; 0 when not measured.
	SyscallNs float64 `json:"syscall_ns,omitempty"`
	// WakeSameCPUNs and WakeCrossCPUNs are a round trip of one byte
	// between two threads over pipes, both pinned to one CPU or each to
	// its own, in ns, measured at the start of the run; 0 when not
	// measured (one CPU, or not Linux).
	WakeSameCPUNs  float64 `json:"wake_same_cpu_ns,omitempty"`
	WakeCrossCPUNs float64 `json:"wake_cross_cpu_ns,omitempty"`
	// FactsNs is how long reading the host facts and measuring
	// SyscallNs took, in ns.
	FactsNs int64 `json:"host_facts_ns,omitempty"`
}

// numCPU is how many logical CPUs the run may place its processes on: the
// machine's online CPUs that this process's cgroup allows, as placement
// reads them, not runtime.NumCPU, which is the affinity dbsock inherited
// (one CPU when started from a process pinned to one, though its
// placement pins within all of them).
func numCPU() int {
	if cpus, err := placement.Available(); err == nil && len(cpus) > 0 {
		return len(cpus)
	}
	return runtime.NumCPU()
}

// Collect reads the environment of this machine and process, with the
// versions of the client libraries (module paths) compiled in.
func Collect(libraries []string) Environment {
	env := Environment{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Kernel:    readTrim("/proc/sys/kernel/osrelease"),
		CPUModel:  cpuModel(),
		NumCPU:    numCPU(),
		GoVersion: runtime.Version(),
		Drivers:   map[string]string{},
		Governor:  readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
	}
	env.Virtualization = virtualization()
	bi, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range bi.Deps {
			for _, m := range libraries {
				if dep.Path == m {
					env.Drivers[m] = dep.Version
				}
			}
		}
	}
	if !ok || len(bi.Deps) == 0 {
		// A test binary carries no module information (golang/go#33976):
		// the library's tests run with the go command at hand, in the
		// module whose versions they were built from.
		for m, v := range moduleVersions(libraries) {
			env.Drivers[m] = v
		}
	}
	return env
}

// moduleVersions asks the go command which version of each module the
// module in the working directory builds with (nil when it cannot say).
func moduleVersions(modules []string) map[string]string {
	if len(modules) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", append([]string{"list", "-m", "-e", "-f", "{{.Path}} {{.Version}}"}, modules...)...).Output()
	if err != nil {
		return nil
	}
	versions := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if path, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && v != "" {
			versions[path] = v
		}
	}
	return versions
}

// readTrim is the file at path trimmed, at most 64 KiB of it.
func readTrim(path string) string { return readLimited(path, 64<<10) }

func cpuModel() string { return cpuInfo()["model name"] }

// Version is dbsock's version, set at build time with
// -ldflags "-X github.com/dbsock/dbsock/internal/sysinfo.Version=...".
// Without it, the module version from the build info is used.
var Version = ""

// Commit is the source commit, set like Version.
var Commit = ""

// Self returns dbsock's name, version and commit.
func Self() Tool {
	t := Tool{Name: "dbsock", Version: Version, Commit: Commit}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if t.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			t.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && t.Commit == "" {
				t.Commit = s.Value
			}
		}
	}
	if t.Version == "" {
		t.Version = "devel"
	}
	return t
}

// virtualization names the container or hypervisor this process runs in,
// from what Linux exposes without privileges.
func virtualization() string {
	var parts []string
	if _, err := os.Stat("/.dockerenv"); err == nil {
		parts = append(parts, "docker container")
	} else if b := readTrim("/proc/1/cgroup"); strings.Contains(b, "docker") || strings.Contains(b, "kubepods") {
		parts = append(parts, "container")
	}
	vendor := readTrim("/sys/class/dmi/id/sys_vendor")
	product := readTrim("/sys/class/dmi/id/product_name")
	hv := hasCPUFlag("hypervisor")
	switch {
	case strings.Contains(vendor, "QEMU") || strings.Contains(product, "KVM"):
		parts = append(parts, "KVM/QEMU guest")
	case strings.Contains(vendor, "Amazon"):
		parts = append(parts, "AWS guest ("+product+")")
	case strings.Contains(vendor, "Google"):
		parts = append(parts, "Google Cloud guest")
	case strings.Contains(vendor, "Microsoft"):
		parts = append(parts, "Hyper-V guest")
	case strings.Contains(vendor, "VMware"):
		parts = append(parts, "VMware guest")
	case hv:
		parts = append(parts, "virtual machine")
	}
	if len(parts) == 0 {
		if vendor == "" {
			return ""
		}
		return "none"
	}
	return strings.Join(parts, ", ")
}

func hasCPUFlag(flag string) bool {
	return slices.Contains(strings.Fields(cpuInfo()["flags"]), flag)
}

// AvailableMemory is how many bytes this process can still use: the
// kernel's MemAvailable, or less when a cgroup (v2) limits memory.
func AvailableMemory() (int64, error) {
	b := readTrim("/proc/meminfo")
	if b == "" {
		return 0, errors.New("cannot read /proc/meminfo")
	}
	var avail int64 = -1
	for _, line := range strings.Split(b, "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				avail = kb << 10
			}
		}
	}
	if avail < 0 {
		return 0, errors.New("/proc/meminfo has no MemAvailable")
	}
	if limit, used, ok := cgroupMemory(); ok && limit-used < avail {
		avail = max(limit-used, 0)
	}
	return avail, nil
}

// cgroupMemory reads this process's memory cgroup: its limit and what it
// uses, from cgroup v2 (memory.max) or v1 (memory.limit_in_bytes).
func cgroupMemory() (limit, used int64, ok bool) {
	for _, line := range strings.Split(readTrim("/proc/self/cgroup"), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, max, cur string
		switch {
		case f[0] == "0" && f[1] == "":
			dir, max, cur = filepath.Join("/sys/fs/cgroup", f[2]), "memory.max", "memory.current"
		case strings.Contains(","+f[1]+",", ",memory,"):
			dir, max, cur = filepath.Join("/sys/fs/cgroup/memory", f[2]), "memory.limit_in_bytes", "memory.usage_in_bytes"
		default:
			continue
		}
		l, err1 := strconv.ParseInt(readTrim(filepath.Join(dir, max)), 10, 64) // "max": no limit
		u, err2 := strconv.ParseInt(readTrim(filepath.Join(dir, cur)), 10, 64)
		if err1 == nil && err2 == nil {
			return l, u, true
		}
	}
	return 0, 0, false
}
