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
// through a hop with both legs known.
func writeHops(b *strings.Builder, r *results.Report) {
	var rows []string
	sweep := len(r.Summary) > len(r.Targets)
	for i := range r.Summary {
		s := &r.Summary[i]
		for _, m := range r.HopMoves(s) {
			speed := fmt.Sprintf("%.2f×", m.SpeedupP50)
			if ci := m.SpeedupP50CI; ci != nil {
				speed = fmt.Sprintf("%.2f× (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
			}
			if m.VerdictKind == results.NoResult {
				speed = "–"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", cell(rowName(r, *s, sweep)), legsMoved(m),
				legsLabel(m.From), legsLabel(m.To), speed, legsVerdict(m)))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("Through a hop in front of the server (a pooler or a proxy), each route has two legs: the client's to the hop, and the hop's to the server behind it, " +
		"each checked where it runs (each run's transport evidence says how). Which leg each comparison above moved, and what it bought " +
		"(speedup: the first route's p50 over the second's, paired as above; above 1, the second is faster):\n\n")
	b.WriteString("| target | moved | from | to | p50 speedup (95% CI) | verdict |\n|---|---|---|---|--:|---|\n")
	b.WriteString(strings.Join(rows, "") + "\n")
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
