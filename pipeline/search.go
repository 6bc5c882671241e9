package pipeline

import (
	"context"
	"fmt"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
)

// --rate auto finds each path's highest rate within the run's objective
// without a hand-made list: a bounded search that doubles the offered
// rate from SearchStart, measuring each rate as a case of its own (every
// server instance, every client stack), until no path holds the objective
// at a rate (results.SLO.Holds), or MaxSearchSteps rates, or
// scenarios.MaxRate. Its steps are the case's rates in the report, so
// that its answer reads as a --rate list's would, at the same points.

// The search's bounds.
const (
	SearchStart    = 1000 // ops/s per path
	MaxSearchSteps = 8    // 1,000 to 128,000 ops/s
)

// searchRates measures case c at doubling rates until no path of any
// client stack holds the objective; emit receives every run.
func (p Plan) searchRates(ctx context.Context, tr *targetRun, d drivers.Driver, c scenarios.Case, loops []caseLoop, emit func(results.Run)) error {
	if p.SLO == nil {
		return fmt.Errorf("a search of rates needs a latency objective to search within")
	}
	for i, rate := range searchSteps() {
		step := i + 1
		c.Offered = rate
		var got []results.Run
		if err := p.measureCase(ctx, tr, d, c, loops, func(r results.Run) { got = append(got, r); emit(r) }); err != nil {
			return err
		}
		held := p.held(got)
		fmt.Fprintf(p.log(), "dbsock: %s: rate search step %d at %g ops/s: %s\n", tr.t.Name, step, rate, heldWords(held, *p.SLO))
		if len(held) == 0 {
			return nil
		}
	}
	return nil
}

// searchSteps are the rates a search may offer, in order: SearchStart
// doubled at each step, at most MaxSearchSteps of them, none above
// scenarios.MaxRate.
func searchSteps() []float64 {
	var rates []float64
	for rate := float64(SearchStart); len(rates) < MaxSearchSteps && rate <= scenarios.MaxRate; rate *= 2 {
		rates = append(rates, rate)
	}
	return rates
}

// held lists the paths (of any stack) whose side of runs held the
// objective.
func (p Plan) held(runs []results.Run) []string {
	rep := &results.Report{Runs: runs}
	rep.Config.Baseline = p.Baseline
	if err := rep.Summarize(); err != nil {
		return nil
	}
	var out []string
	for _, s := range rep.Summary {
		for _, side := range s.Sides {
			if p.SLO.Holds(side.Side) {
				out = append(out, side.Path.Label()+stackSuffix(s.Stack))
			}
		}
	}
	return out
}

func stackSuffix(stack string) string {
	if stack == "" {
		return ""
	}
	return " (" + stack + ")"
}

func heldWords(held []string, o results.SLO) string {
	if len(held) == 0 {
		return "no path held " + o.String() + ": the search ends"
	}
	return fmt.Sprintf("%v held %s", held, o)
}
