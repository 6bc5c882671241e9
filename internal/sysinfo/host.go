package sysinfo

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// What tells two hosts apart: the facts a run records of the machine it
// ran on besides its model name (the CPU's identity and microcode, each
// CPU vulnerability's mitigation, the kernel's command line), and a few
// of its costs measured in a moment at the start of the run.

// CPUID is the CPU's identity as the kernel reports it in /proc/cpuinfo
// (of its first CPU): two hosts with one model name may differ in
// stepping or microcode, and with them in their mitigations.
type CPUID struct {
	Vendor    string `json:"vendor,omitempty"`
	Family    string `json:"family,omitempty"`
	Model     string `json:"model,omitempty"`
	Stepping  string `json:"stepping,omitempty"`
	Microcode string `json:"microcode,omitempty"`
}

// Limits of what is read of each file: far more than any kernel writes
// there, so that a strange /proc or /sys costs no memory.
const (
	maxSmallFile = 4 << 10 // one line of /sys, /proc/cmdline
	maxCPUInfo   = 1 << 20 // /proc/cpuinfo (its first CPU is read)
	maxVulnFiles = 64      // entries of the vulnerabilities directory
	maxLabel     = 64      // a host label's characters
	syscallOps   = 20000   // getppid calls timed, in batches
	syscallBatch = 2000    // getppid calls per batch
)

// HostFacts fills e's host facts: the label (the hostname when label is
// ""), the CPU's identity, the vulnerabilities' mitigations, the kernel's
// command line, the cost of a system call and of a thread's wake-up on one
// CPU and across two, and how long all that took (FactsNs).
func (e *Environment) HostFacts(label string) {
	start := time.Now()
	if label == "" {
		label, _ = os.Hostname()
	}
	e.Host = label
	e.CPU = cpuID()
	e.Vulnerabilities = vulnerabilities("/sys/devices/system/cpu/vulnerabilities")
	e.KernelCmdline = readLimited("/proc/cmdline", maxSmallFile)
	e.SyscallNs = syscallCost()
	e.WakeSameCPUNs, e.WakeCrossCPUNs = wakeCosts()
	e.FactsNs = time.Since(start).Nanoseconds()
}

// CheckHostLabel says what is wrong with a host label (--host): empty,
// longer than 64 characters, or holding a control character or a line
// break.
func CheckHostLabel(label string) error {
	switch {
	case strings.TrimSpace(label) == "":
		return errors.New("is empty")
	case !utf8.ValidString(label):
		return errors.New("is not UTF-8 text")
	case utf8.RuneCountInString(label) > maxLabel:
		return errors.New("is longer than 64 characters")
	case strings.IndexFunc(label, unicode.IsControl) >= 0:
		return errors.New("holds a control character")
	}
	return nil
}

// readLimited is the file at path, at most limit bytes of it, trimmed
// ("" when it cannot be read).
func readLimited(path string, limit int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cpuInfo is the first CPU's block of /proc/cpuinfo as key: value pairs
// (nil when it cannot be read).
func cpuInfo() map[string]string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	info := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(f, maxCPUInfo))
	sc.Buffer(make([]byte, 0, 64<<10), 256<<10) // a flags line is long
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" && len(info) > 0 {
			break // the first CPU's block ends
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return info
}

// cpuID is the CPU's identity, from cpuInfo (nil where none is said).
func cpuID() *CPUID {
	info := cpuInfo()
	id := CPUID{Vendor: info["vendor_id"], Family: info["cpu family"], Model: info["model"],
		Stepping: info["stepping"], Microcode: info["microcode"]}
	if id == (CPUID{}) {
		return nil
	}
	return &id
}

// vulnerabilities are the files of dir (the kernel's CPU vulnerabilities),
// each its first line: "Mitigation: PTI", "Not affected", "Vulnerable"
// (nil when dir cannot be read).
func vulnerabilities(dir string) map[string]string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, err := d.Readdirnames(maxVulnFiles)
	if err != nil && len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	out := map[string]string{}
	for _, n := range names {
		line, _, _ := strings.Cut(readLimited(filepath.Join(dir, n), maxSmallFile), "\n")
		out[n] = line
	}
	return out
}

// syscallCost is what one getppid system call costs on this host, in ns:
// the least over batches of a mean per call, so that a batch the
// scheduler interrupted counts for nothing. PTI, SRSO's mitigations and
// a hypervisor's traps all lengthen it, and every path's op makes
// several.
func syscallCost() float64 {
	best := 0.0
	for done := 0; done < syscallOps; done += syscallBatch {
		start := time.Now()
		for range syscallBatch {
			syscall.Getppid()
		}
		ns := float64(time.Since(start).Nanoseconds()) / syscallBatch
		if best == 0 || ns < best {
			best = ns
		}
	}
	return best
}
