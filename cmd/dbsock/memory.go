package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dustin/go-humanize"

	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// checkMemory estimates, before anything starts, what the sweep's largest
// case holds at once, and refuses what cannot fit: the values in flight in
// dbsock (each worker's histograms and connections, and the values of its
// ops in flight: scenarios.Options.CheckMemory), and the values seeded
// into each server (rows x value size), against half of what this machine
// (or its memory cgroup) has available.
func (o *runOptions) checkMemory(names []string, available func() (int64, error)) error {
	size := int64(6) // the targets' own small value
	if len(o.sweep.sizes) > 0 {
		size = max(int64(slices.Max(o.sweep.sizes)), 1)
	}
	depth := 1
	if len(o.sweep.pipelines) > 0 {
		depth = slices.Max(o.sweep.pipelines)
	}
	for _, sc := range o.sweep.scenarios {
		opt := scenarios.Options{Concurrency: slices.Max(o.sweep.concurrency), Scenario: sc, Op: o.workload.op, Rate: o.sweep.rate}
		var me *scenarios.MemoryError
		if err := opt.CheckMemory(size, depth); errors.As(err, &me) {
			lower := fmt.Sprintf("lower --concurrency to at most %d, or --pipeline or --value-size", me.MaxWorkers)
			if me.MaxWorkers == 0 {
				lower = "even one worker does not fit: lower --pipeline or --value-size"
			}
			return usagef("--concurrency %d would hold about %s in dbsock (%s per worker in latency histograms and connections, one per transport, and %s of values in flight at --pipeline %d and --value-size %s), more than the %s it allows itself; %s",
				me.Workers, humanize.IBytes(uint64(me.Bytes)), humanize.IBytes(uint64(me.WorkerBytes)), humanize.IBytes(uint64(me.ValueBytes)),
				depth, humanize.IBytes(uint64(size)), humanize.IBytes(scenarios.ClientBudget), lower)
		}
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
