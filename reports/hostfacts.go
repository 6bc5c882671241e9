package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dbsock/dbsock/results"
)

// What a report says of the host it ran on: the Environment table's rows
// of the host facts (sysinfo.Environment.HostFacts), and the facts a
// report of several hosts sets side by side.

// hostFact is one fact of a host: its name, and its value as the report
// holds it (for Markdown, escaped by the caller).
type hostFact struct{ name, value string }

// hostRows are the Environment table's rows of r's host facts, each only
// where the file has it (a file of an older dbsock has none): the short
// ones, and the long ones (the kernel's command line, the
// vulnerabilities) that go last.
func hostRows(r *results.Report) (short, long [][2]string) {
	e := r.Environment
	add := func(rows *[][2]string, name, value string) {
		if value != "" {
			*rows = append(*rows, [2]string{name, value})
		}
	}
	add(&short, "Host", e.Host)
	add(&short, "CPU identity", cpuIdentity(r))
	add(&short, "Microcode", microcode(r))
	add(&short, "System call (getppid)", syscallWords(r))
	add(&short, "Wake-up round trip (pipe)", wakeWords(r))
	add(&long, "Kernel command line", e.KernelCmdline)
	add(&long, "CPU vulnerabilities", vulnerabilityWords(e.Vulnerabilities))
	return short, long
}

// cpuIdentity is the CPU's vendor, family, model and stepping:
// "AuthenticAMD family 25 model 1 stepping 1" ("" when unknown).
func cpuIdentity(r *results.Report) string {
	id := r.Environment.CPU
	if id == nil || id.Family == "" && id.Model == "" && id.Stepping == "" {
		return ""
	}
	return strings.TrimSpace(fmt.Sprintf("%s family %s model %s stepping %s", id.Vendor, orUnknown(id.Family), orUnknown(id.Model), orUnknown(id.Stepping)))
}

// microcode is the CPU's microcode revision ("" when unknown).
func microcode(r *results.Report) string {
	if id := r.Environment.CPU; id != nil {
		return id.Microcode
	}
	return ""
}

// syscallWords is what a system call cost, and what measuring it and
// reading the facts took: "61 ns (host facts read in 1.4 ms)".
func syscallWords(r *results.Report) string {
	e := r.Environment
	if e.SyscallNs <= 0 {
		return ""
	}
	s := fmt.Sprintf("%.0f ns", e.SyscallNs)
	if e.FactsNs > 0 {
		s += fmt.Sprintf(" (host facts read in %s)", time.Duration(e.FactsNs).Round(10*time.Microsecond))
	}
	return s
}

// vulnerabilityWords is every vulnerability the kernel does not call
// "Not affected", with its state, and how many it does: "meltdown:
// Mitigation: PTI; spectre_v1: Mitigation: usercopy barriers; 14 not
// affected" ("" without any).
func vulnerabilityWords(v map[string]string) string {
	if len(v) == 0 {
		return ""
	}
	var parts []string
	unaffected := 0
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if v[k] == "Not affected" {
			unaffected++
			continue
		}
		parts = append(parts, k+": "+orUnknown(v[k]))
	}
	if unaffected > 0 {
		parts = append(parts, fmt.Sprintf("%d not affected", unaffected))
	}
	return strings.Join(parts, "; ")
}

// hostFacts are what a report of several hosts sets side by side for r's
// host, in a fixed order: the machine, the kernel, the run's conditions,
// each target's server, then each CPU vulnerability on its own.
func hostFacts(r *results.Report) []hostFact {
	e := r.Environment
	facts := []hostFact{
		{"dbsock", strings.TrimSpace(r.Tool.Version + " " + shortCommit(r.Tool.Commit))},
		{"date", r.StartedAt.UTC().Format(time.RFC3339)},
		{"OS", e.OS + "/" + e.Arch},
		{"kernel", e.Kernel},
		{"kernel command line", e.KernelCmdline},
		{"CPU", e.CPUModel},
		{"logical CPUs", fmt.Sprint(e.NumCPU)},
		{"CPU identity", cpuIdentity(r)},
		{"microcode", microcode(r)},
		{"virtualization", e.Virtualization},
		{"CPU governor", e.Governor},
		{"system call (getppid)", syscallNs(e.SyscallNs)},
		{"wake-up round trip, one CPU", microseconds(e.WakeSameCPUNs)},
		{"wake-up round trip, across CPUs", microseconds(e.WakeCrossCPUNs)},
		{"Go", e.GoVersion},
		{"placement", placementRow(r)},
		{"provider", r.Config.Provider + clientSuffix(r.Config.Client)},
	}
	for _, t := range r.Targets {
		facts = append(facts, hostFact{t.Name + "'s server", t.Server.String()})
	}
	for _, k := range slices.Sorted(maps.Keys(e.Vulnerabilities)) {
		facts = append(facts, hostFact{"vulnerability " + k, e.Vulnerabilities[k]})
	}
	return facts
}

// wakeWords is a thread's wake-up round trip on one CPU and across two:
// "2.4 µs on one CPU, 64.9 µs across two" ("" when not measured).
func wakeWords(r *results.Report) string {
	e := r.Environment
	switch {
	case e.WakeSameCPUNs <= 0:
		return ""
	case e.WakeCrossCPUNs <= 0:
		return microseconds(e.WakeSameCPUNs) + " on one CPU (one CPU allowed)"
	}
	return microseconds(e.WakeSameCPUNs) + " on one CPU, " + microseconds(e.WakeCrossCPUNs) + " across two"
}

// microseconds is ns in µs with one decimal ("" for none).
func microseconds(ns float64) string {
	if ns <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f µs", ns/1000)
}

func syscallNs(ns float64) string {
	if ns <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f ns", ns)
}
