package pipeline

// A run under several placements (Plan.Placements) measures each case
// under each of them in turn on every server instance: before a
// placement's turn dbsock pins itself, and so the agents it starts from
// then on, to the placement's client CPUs, and every process of the
// server to its server CPUs (the servers were started allowed on all of
// them: placement.ServerUnion). Each placement's runs are a case of their
// own (results.Case.Placement), paired block by block as any case's, so
// that the report gives a verdict per placement and says where they
// disagree.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/supply"
)

// turns are the placements a case takes turns in on each instance: the
// run's placements, or one turn that changes nothing.
func (p Plan) turns() []*placement.Placement {
	if len(p.Placements) < 2 {
		return []*placement.Placement{nil}
	}
	out := make([]*placement.Placement, len(p.Placements))
	for i := range p.Placements {
		out[i] = &p.Placements[i]
	}
	return out
}

// turnsFor are the turns of tr's target: the run's, or where auto chose
// them and dbsock cannot pin this server (a user's, or one whose
// processes it does not see), one turn as the scheduler places it, said
// once on the target.
func (p Plan) turnsFor(tr *targetRun) []*placement.Placement {
	turns := p.turns()
	if len(turns) < 2 || !p.PlacementsAuto {
		return turns
	}
	err := canPin(tr.srv)
	if err == nil {
		return turns
	}
	if !slices.ContainsFunc(tr.ti.Warnings, func(w results.Warning) bool { return w.Kind == results.PlacementsUnpinned }) {
		w := results.Warn(results.PlacementsUnpinned, "%s was measured where the scheduler placed its client and server, not placed shared and split as auto places the others: %v", tr.t.Name, err)
		tr.ti.Warnings = append(tr.ti.Warnings, w)
		fmt.Fprintf(p.log(), "dbsock: %s: warning: %s\n", tr.t.Name, w)
	}
	return []*placement.Placement{nil}
}

// canPin says why dbsock cannot pin srv's processes to a placement's
// CPUs (nil: it can): a server it did not start is the user's, whose
// CPUs are theirs; one whose processes it does not see, or may not pin.
func canPin(srv *supply.Server) error {
	if srv.Provider == (&supply.External{}).Name() {
		return errors.New("dbsock does not pin a server it did not start")
	}
	pids, _ := meterRoots(srv.CPU)
	if len(pids) == 0 {
		return fmt.Errorf("dbsock does not see its processes (%s)", srv.CPUWhyNot)
	}
	for _, root := range pids {
		cpus, err := placement.Affinity(root)
		if err == nil {
			err = placement.PinTree([]int{root}, cpus) // the same CPUs: may dbsock pin it at all
		}
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n") // one line per thread: the first says why
			return fmt.Errorf("dbsock may not pin its processes (%s)", first)
		}
	}
	return nil
}

// place pins dbsock to pl's client CPUs and srv's processes to pl's
// server CPUs, and returns how to undo dbsock's pinning (nil pl: nothing).
func (p Plan) place(pl *placement.Placement, srv *supply.Server) (restore func() error, err error) {
	if pl == nil {
		return func() error { return nil }, nil
	}
	if srv.Provider == (&supply.External{}).Name() {
		return nil, fmt.Errorf("pin %s's server for placement %s: dbsock does not pin a server it did not start; give one placement (--placement none) for your own servers", srv.Target, pl.Mode)
	}
	pids, _ := meterRoots(srv.CPU)
	if len(pids) == 0 {
		return nil, fmt.Errorf("pin %s's server for placement %s: dbsock does not see its processes (%s)", srv.Target, pl.Mode, srv.CPUWhyNot)
	}
	var all []int
	for _, root := range pids {
		tree, err := cpustat.Descendants(root)
		if err != nil {
			return nil, fmt.Errorf("pin %s's server for placement %s: %w", srv.Target, pl.Mode, err)
		}
		all = append(all, tree...)
	}
	if err := placement.PinTree(all, pl.Server); err != nil {
		return nil, fmt.Errorf("pin %s's server for placement %s: %w", srv.Target, pl.Mode, err)
	}
	if len(pl.Client) == 0 {
		return func() error { return nil }, nil
	}
	restore, err = placement.PinProcess(pl.Client)
	if err != nil {
		return nil, fmt.Errorf("pin dbsock's client for placement %s: %w", pl.Mode, err)
	}
	return restore, nil
}

// placed is emit for the runs of placement pl's turn: each is marked
// with the placement (nil: unmarked).
func placed(emit func(results.Run), pl *placement.Placement) func(results.Run) {
	if pl == nil {
		return emit
	}
	return func(r results.Run) {
		r.Placement = pl.Mode
		emit(r)
	}
}

// placementRecords are the run's placements as the report records them,
// when it has more than one.
func (p Plan) placementRecords() []results.Placement {
	if len(p.Placements) < 2 {
		return nil
	}
	var out []results.Placement
	for _, pl := range p.Placements {
		out = append(out, results.Placement{Mode: pl.Mode, ClientCPUs: placement.FormatList(pl.Client), ServerCPUs: placement.FormatList(pl.Server), Reason: pl.Reason})
	}
	return out
}
