package scenarios

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// A round's order: which path opens, warms up and times first, and the
// server's own statistics opened beside the paths' connections.

// openExecStats opens the server's own execution statistics, when the
// driver reads them, over the Unix path (else the first), for every side.
// It returns -1 when they are open (sides[0].exec.r is to be closed), the
// path that failed with the error when the server did not answer, and
// len(paths) when there are none.
func openExecStats(ctx context.Context, d drivers.Driver, paths drivers.Paths, sides []*side, opt caseRun) (int, error) {
	es, ok := d.(drivers.ExecStatter)
	if !ok {
		return len(paths), nil
	}
	at := 0
	for i, p := range paths {
		if p.Transport.Network() == "unix" {
			at = i
		}
	}
	var r drivers.ExecReader
	var source string
	err := drivers.Within(ctx, opt.timeout(), func(ctx context.Context) (err error) {
		r, source, err = es.OpenExecStats(ctx, paths[at])
		return err
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// A server that stopped answering here would otherwise cost
		// another OpTimeout in warm-up before the run ends.
		return at, setting.Err("%s over %s: %w within %s (%s) while dbsock opened its statistics connection", d.Name(), paths[at], ErrNoAnswer, opt.timeout(), setting.OpTimeout)
	}
	if err != nil {
		return len(paths), nil // the figures are left out
	}
	for _, s := range sides {
		s.exec, s.execSource = &execStats{r: r}, source
	}
	return -1, nil
}

// openOrder is the order in which round (1-based) opens and warms up its
// paths' connections: forward in odd rounds, backward in even ones, so
// that no path is always the first to touch the server.
func openOrder(n, round int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
		if round%2 == 0 {
			order[i] = n - 1 - i
		}
	}
	return order
}

// blockOrder draws the order of one block group's paths into order
// (Fisher-Yates): with two paths, the second goes first when rng draws 1.
func blockOrder(rng *rand.Rand, order []int) {
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		j := i - rng.IntN(i+1)
		order[i], order[j] = order[j], order[i]
	}
}
