package results

import "github.com/dbsock/dbsock/drivers"

// Legs are a route's two legs through a hop (a pooler in front of the
// server): the client's to the hop, and the hop's to the server behind it.
type Legs struct {
	Client drivers.Transport
	Hop    drivers.Transport
}

// LegMove is a comparison of two routes through a hop, read as its legs:
// which of them moved between the baseline's route (From) and the path's
// (To).
type LegMove struct {
	Comparison
	From, To Legs
}

// ClientMoved and HopMoved say which legs differ between the two routes.
func (m LegMove) ClientMoved() bool { return m.From.Client != m.To.Client }

// HopMoved: see ClientMoved.
func (m LegMove) HopMoved() bool { return m.From.Hop != m.To.Hop }

// HopMoves are s's comparisons whose two routes both have known legs: the
// hop's leg as its runs' endpoints name it (drivers.Endpoint.Hop, checked
// from both of its ends when the case ran), the client's as the path's.
// Comparisons of a case without a hop, or of a side without runs that
// name the hop's leg, are left out.
func (r *Report) HopMoves(s *Summary) []LegMove {
	legs := map[drivers.Transport]Legs{}
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Case == s.Case && run.Endpoint.Hop != "" {
			legs[run.Transport] = Legs{Client: run.Transport.Seen(), Hop: run.Endpoint.Hop}
		}
	}
	var out []LegMove
	for _, c := range s.Comparisons {
		from, ok1 := legs[c.Baseline]
		to, ok2 := legs[c.Path]
		if ok1 && ok2 && from != to {
			out = append(out, LegMove{Comparison: c, From: from, To: to})
		}
	}
	return out
}
