package reports

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbsock/dbsock/results"
)

// Where the run ran: the placement sentence of the method and the
// Environment table, each saying of a server what was so.

// placementsPhrase names a run's placements when it had several, each
// with its CPUs ("" with one).
func placementsPhrase(r *results.Report) string {
	ps := r.Config.Placements
	if len(ps) < 2 {
		return ""
	}
	var parts []string
	for _, p := range ps {
		where := "not pinned"
		if p.ClientCPUs != "" || p.ServerCPUs != "" {
			where = "client CPU " + p.ClientCPUs + ", servers CPU " + orNotPinned(p.ServerCPUs)
		}
		parts = append(parts, results.PlacementName(p.Mode)+" ("+where+")")
	}
	return "each case placed " + strings.Join(parts, " and ") + ", taking turns on every server instance"
}

// placementSentence says where the client and the servers ran.
func placementSentence(r *results.Report) string {
	if pl := placementsPhrase(r); pl != "" {
		return "CPU placements: " + pl + ": before each placement's turn dbsock pinned itself, the agents it then started and every process of the server to that placement's CPUs, so that each case has a verdict per placement, paired within it."
	}
	p := r.Config.Placement
	if p.Mode == "none" || p.Mode == "" {
		return fmt.Sprintf("Nothing was pinned to a CPU (the client could run on CPUs %s), so the scheduler chose where client and server ran.", p.ClientCPUs)
	}
	s := fmt.Sprintf("CPU placement %q: the client ran pinned to CPU %s and the servers dbsock started to CPU %s.", p.Mode, p.ClientCPUs, p.ServerCPUs)
	if ext := externalCPUs(r); ext != "" {
		// The reason speaks of where the servers would go: not so of these.
		return fmt.Sprintf("CPU placement %q: the client ran pinned to CPU %s; the %s.", p.Mode, p.ClientCPUs, ext)
	}
	if p.Reason != "" {
		s += " (" + strings.TrimPrefix(p.Reason, "auto: ") + ".)"
	}
	return s
}

// writeEnvironment is the Environment table: the machine, the run's
// settings and the client libraries.
func writeEnvironment(b *strings.Builder, r *results.Report) {
	e := r.Environment
	b.WriteString("## Environment\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 1, ' ', 0)
	rows := [][2]string{
		{"Date", r.StartedAt.UTC().Format(time.RFC3339)},
		{"dbsock", strings.TrimSpace(r.Tool.Version + " " + shortCommit(r.Tool.Commit))},
		{"OS / kernel", e.OS + "/" + e.Arch + ", Linux " + e.Kernel},
		{"CPU", fmt.Sprintf("%s, %d logical CPUs", e.CPUModel, e.NumCPU)},
		{"Virtualization", orUnknown(e.Virtualization)},
		{"CPU governor", orUnknown(e.Governor)},
		{"Go", e.GoVersion},
		{"Placement", placementRow(r)},
		{"Run", fmt.Sprintf("n=%d, warmup=%d, instances=%d, rounds=%d, blocks=%d, seed=%d, scenario=%s, provider=%s", r.Config.N, r.Config.Warmup, max(r.Config.Instances, 1), r.Config.Rounds,
			r.Config.Blocks, r.Config.Seed, r.Config.Scenario, r.Config.Provider) + clientSuffix(r.Config.Client)},
	}
	short, long := hostRows(r)
	rows = append(rows[:1], append(short, rows[1:]...)...) // the host first, after the date
	for _, k := range usedDrivers(r) {
		rows = append(rows, [2]string{"Client", k + " " + e.Drivers[k]})
	}
	fmt.Fprintln(tw, "| | |")
	fmt.Fprintln(tw, "|---|---|")
	for _, row := range rows {
		fmt.Fprintf(tw, "| %s\t| %s\t|\n", row[0], cell(row[1]))
	}
	tw.Flush()
	for _, row := range long { // not padded: every row would be as wide
		fmt.Fprintf(b, "| %s | %s |\n", row[0], cell(row[1]))
	}
}

// placementRow is the Environment's placement: the mode, the client's
// CPUs, and the servers' as they were: the CPUs dbsock pinned the servers
// it started to, and for a server it did not start, the CPUs dbsock read
// of it, never the ones it would have pinned one to.
func placementRow(r *results.Report) string {
	if pl := placementsPhrase(r); pl != "" {
		return pl
	}
	p := r.Config.Placement
	servers := "server CPUs " + orNotPinned(p.ServerCPUs)
	if ext := externalCPUs(r); ext != "" {
		servers = ext
	} else if others := externalTargets(r); len(others) > 0 {
		servers += " for the servers dbsock started; " + strings.Join(others, ", ") + " not started by dbsock, so not pinned by it"
	}
	return fmt.Sprintf("%s (client CPUs %s, %s)", p.Mode, p.ClientCPUs, servers)
}

// externalTargets are the targets whose server dbsock did not start
// (provider external).
func externalTargets(r *results.Report) []string {
	var out []string
	for _, t := range r.Targets {
		if t.Provider == "external" {
			out = append(out, t.Name)
		}
	}
	return out
}
