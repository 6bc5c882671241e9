package main

import (
	"slices"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/targets"
)

// clientBudget is the most dbsock lets the values of its ops in flight
// take in its own process: with its own few tens of MiB, a run stays well
// under 1 GiB.
const clientBudget = 512 << 20

// copiesPerValue is how many copies of a value in flight the client side
// holds at once: the socket's read buffer, the client library's, and the
// one dbsock checks.
const copiesPerValue = 3

// checkMemory estimates, before anything starts, what the sweep's largest
// case holds at once, and refuses what cannot fit: the values in flight in
// dbsock (workers x lookups per op x value size), and the values seeded
// into each server (rows x value size), against half of what this machine
// (or its memory cgroup) has available.
func (o *runOptions) checkMemory(names []string, available func() (int64, error)) error {
	size := int64(6) // the targets' own small value
	if len(o.sweep.sizes) > 0 {
		size = max(int64(slices.Max(o.sweep.sizes)), 1)
	}
	workers, depth := int64(slices.Max(o.sweep.concurrency)), int64(1)
	if len(o.sweep.pipelines) > 0 {
		depth = int64(slices.Max(o.sweep.pipelines))
	}
	if inFlight := workers * depth * size * copiesPerValue; inFlight > clientBudget {
		return usagef("--concurrency %d x --pipeline %d x --value-size %s keeps about %s of values in flight in dbsock (%d copies of each: socket buffer, client library, check), more than the %s it allows itself; lower one of them",
			workers, depth, humanize.IBytes(uint64(size)), humanize.IBytes(uint64(inFlight)), copiesPerValue, humanize.IBytes(clientBudget))
	}
	seeds := false
	for _, name := range names {
		if t, ok := targets.Lookup(name); ok && !t.Own {
			seeds = true
		}
	}
	avail, err := available()
	if !seeds || err != nil || len(o.workload.keysFrom) == len(names) {
		return nil
	}
	if seeded := int64(o.workload.rows) * size; seeded > avail/2 {
		return usagef("--rows %d x --value-size %s seeds about %s into each server, more than half of the %s this machine has available; lower --rows (at most %d at this size) or --value-size",
			o.workload.rows, humanize.IBytes(uint64(size)), humanize.IBytes(uint64(seeded)), humanize.IBytes(uint64(avail)), avail/2/size)
	}
	return nil
}

// availableMemory is sysinfo.AvailableMemory, for checkMemory.
func availableMemory() (int64, error) { return sysinfo.AvailableMemory() }
