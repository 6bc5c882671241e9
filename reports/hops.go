package reports

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// Routes through a hop (a pooler in front of the server): each
// route is two legs, and the question is which leg gains from the socket.
// The table under the further paths says, for each comparison of two
// routes through the hop, which leg moved and what it bought.

// legsLabel names a route through a hop by its legs: "TCP, hop Unix".
func legsLabel(l results.Legs) string {
	return l.Client.Label() + ", hop " + l.Hop.Label()
}

// legsMoved says which legs a comparison moved, in words.
func legsMoved(m results.LegMove) string {
	switch {
	case m.ClientMoved() && m.HopMoved():
		return "both legs"
	case m.ClientMoved():
		return "the client's leg (the hop's held on " + m.To.Hop.Label() + ")"
	default:
		return "the hop's leg (the client's held on " + m.To.Client.Label() + ")"
	}
}

// writeHops is the table of legs moved, when a case of r ran routes
// through a hop with both legs known. At load (a comparison with the p99
// and the server's CPU per op paired) it gives each leg's p99 and
// capacity gain too.
func writeHops(b *strings.Builder, r *results.Report) {
	var moves []results.LegMove
	var names []string
	load := false
	sweep := len(r.Summary) > len(r.Targets)
	for i := range r.Summary {
		s := &r.Summary[i]
		for _, m := range r.HopMoves(s) {
			moves, names = append(moves, m), append(names, rowName(r, *s, sweep))
			load = load || m.Tail != nil || m.Capacity != nil
		}
	}
	if len(moves) == 0 {
		return
	}
	b.WriteString("Through a hop in front of the server (a pooler or a proxy), each route has two legs: the client's to the hop, and the hop's to the server behind it, " +
		"each checked where it runs (each run's transport evidence says how). Which leg each comparison above moved, and what it bought " +
		"(speedup: the first route's p50 over the second's, paired as above; above 1, the second is faster")
	if load {
		b.WriteString("; the p99 likewise, and the capacity gain: the first route's server CPU per op over the second's, the hop's own included")
	}
	b.WriteString("):\n\n| target | moved | from | to | p50 speedup (95% CI) |")
	if load {
		b.WriteString(" p99 speedup (95% CI) | capacity gain (95% CI) |")
	}
	b.WriteString(" verdict |\n|---|---|---|---|--:|")
	if load {
		b.WriteString("--:|--:|")
	}
	b.WriteString("---|\n")
	for i, m := range moves {
		speed := ratioCI(m.SpeedupP50, m.SpeedupP50CI)
		if m.VerdictKind == results.NoResult {
			speed = "–"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |", cell(names[i]), legsMoved(m), legsLabel(m.From), legsLabel(m.To), speed)
		if load {
			fmt.Fprintf(b, " %s | %s |", pairedCell(m.Tail), pairedCell(m.Capacity))
		}
		fmt.Fprintf(b, " %s |\n", legsVerdict(m))
	}
	b.WriteString("\n")
}

// pairedCell is a paired ratio with its interval, or "–" where there is none.
func pairedCell(p *results.Paired) string {
	if p == nil {
		return "–"
	}
	return ratioCI(p.Ratio, p.CI)
}

// legsVerdict is the comparison's short verdict with each route named by
// its legs ("TCP faster" would not say which TCP).
func legsVerdict(m results.LegMove) string {
	v := words.ShortPathVerdict(&m.Comparison)
	if rest, ok := strings.CutPrefix(v, m.Baseline.Label()+" "); ok {
		return legsLabel(m.From) + " " + rest
	}
	if rest, ok := strings.CutPrefix(v, m.Path.Label()+" "); ok {
		return legsLabel(m.To) + " " + rest
	}
	return v
}
