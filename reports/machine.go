package reports

import (
	"fmt"
	"strconv"

	"github.com/dbsock/dbsock/results"
)

// RunDifference is one way two reports' runs were made differently: the
// field of the report file that differs, what it is in words, and its
// value in each (as the files hold it, unescaped).
type RunDifference struct {
	Field, What, Old, New string
}

// RunDifferences lists how the two reports' runs differ in what moves
// latency besides the code under test: CPU placement, the CPU, its count,
// the kernel, the virtualization, the provider, where the client ran, and
// each shared target's server and image. A comparison across any of them
// measures the machines as much as the change (a --placement split run
// against a same one reads as a 96% regression here); none: nil.
func RunDifferences(old, new *results.Report) []RunDifference {
	var out []RunDifference
	differ := func(field, what, a, b string) {
		if a != b {
			out = append(out, RunDifference{Field: field, What: what, Old: orUnknown(a), New: orUnknown(b)})
		}
	}
	place := func(p results.Placement) string {
		if p.Mode == "" || p.Mode == "none" {
			return "none (not pinned)"
		}
		return fmt.Sprintf("%s (client CPU %s, servers CPU %s)", p.Mode, p.ClientCPUs, orNotPinned(p.ServerCPUs))
	}
	differ("config.placement", "placement", place(old.Config.Placement), place(new.Config.Placement))
	oe, ne := old.Environment, new.Environment
	differ("environment.cpu_model", "CPU", oe.CPUModel, ne.CPUModel)
	differ("environment.num_cpu", "logical CPUs", strconv.Itoa(oe.NumCPU), strconv.Itoa(ne.NumCPU))
	differ("environment.kernel", "kernel", oe.Kernel, ne.Kernel)
	differ("environment.virtualization", "virtualization", oe.Virtualization, ne.Virtualization)
	differ("config.provider", "provider", old.Config.Provider, new.Config.Provider)
	differ("config.client", "client", orHost(old.Config.Client), orHost(new.Config.Client))
	for i, nt := range new.Targets {
		for _, ot := range old.Targets {
			if ot.Name != nt.Name {
				continue
			}
			differ(fmt.Sprintf("targets[%d].server", i), nt.Name+"'s server", ot.Server.String(), nt.Server.String())
			differ(fmt.Sprintf("targets[%d].image", i), nt.Name+"'s image", orLocal(ot.Image), orLocal(nt.Image))
		}
	}
	return out
}

// RunsDiffer is RunDifferences in words, each Markdown: "placement auto
// (client CPU 0, servers CPU 1) against none (not pinned)", the reports'
// strings in it escaped (markdownText).
func RunsDiffer(old, new *results.Report) []string {
	var out []string
	for _, d := range RunDifferences(old, new) {
		out = append(out, fmt.Sprintf("%s %s against %s", safeText(d.What), safeText(d.Old), safeText(d.New)))
	}
	return out
}

func orLocal(image string) string {
	if image == "" {
		return "none"
	}
	return image
}

func orHost(client string) string {
	if client == "" {
		return "host"
	}
	return client
}
