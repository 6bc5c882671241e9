package results

import (
	"slices"
	"strings"

	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
)

// unpinnedServer says, for target's server, when dbsock pinned its client
// but the server, which dbsock did not start and so did not pin, may run
// on several CPUs other than the ones the placement gives servers ("" when
// not): such a server moves between CPUs, to and away from the client's,
// and that moves its latency more than other load does (a key-value
// server a user ran went from 118/89 µs to 53/36 µs TCP/Unix p50 once
// pinned).
func (r *Report) unpinnedServer(target string) Warning {
	p := r.Config.Placement
	if p.Mode == "" || p.Mode == "none" || p.ClientCPUs == "" {
		return Warning{}
	}
	for _, t := range r.Targets {
		if t.Name != target || t.Provider != "external" {
			continue
		}
		list, _, _ := strings.Cut(t.ServerCPUs, " (")
		cpus, err := placement.ParseList(list)
		if err != nil || len(cpus) < 2 {
			return Warning{}
		}
		if planned, err := placement.ParseList(p.ServerCPUs); err == nil && slices.Equal(cpus, planned) {
			return Warning{}
		}
		where := "the CPU the servers dbsock starts get"
		if p.ServerCPUs != "" {
			where = "CPU " + p.ServerCPUs + ", where this placement puts servers,"
		}
		return Warn(UnpinnedServer, "dbsock pinned its client to CPU %s, but this server, which dbsock did not start and so did not pin, may run on CPUs %s: "+
			"it moves between CPUs, to and away from the client's, which moves its latency more than other load does. "+
			"Pin it to %s (taskset -apc LIST PID) and run again, or run with %s none to leave both unpinned.", p.ClientCPUs, list, where, setting.Placement)
	}
	return Warning{}
}
