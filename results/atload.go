package results

// At an application's load the socket's gain is in the tail and in the
// server's CPU as much as in the p50: each comparison also pairs, block by
// block, the p99 (how many ops a block's p99 rests on: its N/100 slowest)
// and the server's CPU per op (the capacity: ops per server core), by the
// same method as the p50 (medians of paired ratios, the interval over
// server instances when there are several, over block pairs otherwise).
// Their verdicts come from their intervals alone: Holm's adjustment is
// over the p50 comparisons, the report's primary ones.

// Paired is one paired comparison beyond the p50: the median of the
// baseline's figure over the path's (above 1: the path's p99 is lower, or
// it spends less server CPU per op and so serves more per server core),
// its interval and what the interval says.
type Paired struct {
	Ratio float64   `json:"ratio"`
	CI    *Interval `json:"ci,omitempty"`
	// Kind is what the interval says: UnixFaster (the path is better),
	// TCPFaster (the baseline is), NoDifference, Undecided or TooFewPairs
	// (TooFewInstances over instances), read as for the p50.
	Kind VerdictKind `json:"verdict_kind"`
	// Pairs is how many block pairs it rests on.
	Pairs int `json:"pairs"`
}

// addTail appends the p99 and CPU-per-op ratios of blocks t and u (the
// baseline's and the path's) to out and in (its instance), where both
// blocks have them.
func (out *pairs) addTail(in *pairs, t, u Block) {
	if t.P99 > 0 && u.P99 > 0 {
		r := float64(t.P99) / float64(u.P99)
		out.p99, in.p99 = append(out.p99, r), append(in.p99, r)
	}
	tOK, uOK := t.N-t.Errors, u.N-u.Errors
	if t.ServerCPUNs > 0 && u.ServerCPUNs > 0 && tOK > 0 && uOK > 0 {
		r := (float64(t.ServerCPUNs) / float64(tOK)) / (float64(u.ServerCPUNs) / float64(uOK))
		out.cpu, in.cpu = append(out.cpu, r), append(in.cpu, r)
	}
}

// tail is the p99's paired comparison; nil without any pair.
func (pr pairs) tail() *Paired {
	return pr.paired(pr.p99, func(in pairs) []float64 { return in.p99 })
}

// capacity is the server CPU per op's paired comparison; nil without any
// pair.
func (pr pairs) capacity() *Paired {
	return pr.paired(pr.cpu, func(in pairs) []float64 { return in.cpu })
}

func (pr pairs) paired(all []float64, of func(pairs) []float64) *Paired {
	if len(all) == 0 {
		return nil
	}
	p := &Paired{Ratio: medianRatio(all), Pairs: len(all), CI: PairedSpeedup(all, pr.rounds)}
	if len(pr.byInstance) > 1 {
		var each [][]float64
		for _, in := range pr.byInstance {
			each = append(each, of(in))
		}
		p.CI, _, _ = InstanceSpeedup(each, pr.rounds)
	}
	p.Kind = Judge(p.CI, 0)
	switch {
	case p.CI != nil:
		p.Ratio = p.CI.Center
	case len(pr.byInstance) > 1:
		p.Kind = TooFewInstances
	}
	return p
}
