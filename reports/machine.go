package reports

import (
	"fmt"
	"strconv"

	"github.com/dbsock/dbsock/results"
)

// RunsDiffer lists how the two reports' runs differ in what moves latency
// besides the code under test: CPU placement, the CPU, its count, the
// kernel, the virtualization, the provider, where the client ran, and each
// shared target's server and image. A comparison across any of them
// measures the machines as much as the change (a --placement split run
// against a same one reads as a 96% regression here); none: nil. Each is
// Markdown: the reports' strings in it are escaped (markdownText).
func RunsDiffer(old, new *results.Report) []string {
	var out []string
	differ := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s against %s", what, safeText(orUnknown(a)), safeText(orUnknown(b))))
		}
	}
	place := func(p results.Placement) string {
		if p.Mode == "" || p.Mode == "none" {
			return "none (not pinned)"
		}
		return fmt.Sprintf("%s (client CPU %s, servers CPU %s)", p.Mode, p.ClientCPUs, orNotPinned(p.ServerCPUs))
	}
	differ("placement", place(old.Config.Placement), place(new.Config.Placement))
	oe, ne := old.Environment, new.Environment
	differ("CPU", oe.CPUModel, ne.CPUModel)
	differ("logical CPUs", strconv.Itoa(oe.NumCPU), strconv.Itoa(ne.NumCPU))
	differ("kernel", oe.Kernel, ne.Kernel)
	differ("virtualization", oe.Virtualization, ne.Virtualization)
	differ("provider", old.Config.Provider, new.Config.Provider)
	differ("client", orHost(old.Config.Client), orHost(new.Config.Client))
	for _, nt := range new.Targets {
		for _, ot := range old.Targets {
			if ot.Name != nt.Name {
				continue
			}
			differ(safeText(nt.Name)+"'s server", ot.Server.String(), nt.Server.String())
			differ(safeText(nt.Name)+"'s image", orLocal(ot.Image), orLocal(nt.Image))
		}
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
