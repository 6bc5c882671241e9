package results

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// sidePool accumulates one transport's runs of one case.
type sidePool struct {
	side   Side
	hist   *hdrhistogram.Histogram
	phases map[string]*hdrhistogram.Histogram
	nanos  int64
}

func (sp *sidePool) add(run *Run) error {
	sp.side.N += run.N
	sp.side.Errors += run.Errors
	sp.side.CPU = sp.side.CPU.Pool(run.CPU)
	sp.side.ServerExec = sp.side.ServerExec.Pool(run.ServerExec)
	sp.side.Generator = sp.side.Generator.Pool(run.Generator)
	sp.nanos += run.ElapsedNs
	h, err := run.Hist()
	if err != nil {
		return err
	}
	if h != nil {
		sp.hist.Merge(h)
	}
	for name, ph := range run.Phases {
		if ph.Histogram == "" {
			continue
		}
		h, err := DecodeHistogram(ph.Histogram)
		if err != nil {
			return err
		}
		if sp.phases[name] == nil {
			sp.phases[name] = NewHistogram()
		}
		sp.phases[name].Merge(h)
	}
	return nil
}

func (sp *sidePool) finish() Side {
	s := sp.side
	s.Latency = LatencyOf(sp.hist)
	if sp.nanos > 0 {
		s.OpsPerSec = float64(s.N-s.Errors) / (float64(sp.nanos) / 1e9)
	}
	if s.N > 0 {
		s.ErrorRate = float64(s.Errors) / float64(s.N)
	}
	if len(sp.phases) > 0 {
		s.Phases = map[string]Latency{}
		for name, h := range sp.phases {
			s.Phases[name] = LatencyOf(h)
		}
	}
	return s
}

// CPUSaving is how much less CPU per op Unix took than TCP (TCP - Unix).
type CPUSaving struct {
	ClientNsPerOp float64  `json:"client_ns_per_op"`
	ServerNsPerOp *float64 `json:"server_ns_per_op,omitempty"`
}

// Phase is one timed part of an op.
type Phase struct {
	Latency   Latency `json:"latency_ns"`
	Histogram string  `json:"histogram,omitempty"`
}

// Side is one transport's pooled result in a Summary.
type Side struct {
	N         int64   `json:"n"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
	Latency   Latency `json:"latency_ns"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Phases pools the runs' phases.
	Phases map[string]Latency `json:"phases,omitempty"`
	// CPU pools the runs' CPU figures.
	CPU *CPU `json:"cpu,omitempty"`
	// ServerExec pools the server's own execution figures.
	ServerExec *ServerExec `json:"server_exec,omitempty"`
	// Generator pools how the open loop kept its schedule (a case at a
	// rate).
	Generator *Generator `json:"generator,omitempty"`
}

// Summary pools a case's rounds per path and compares them: its result is
// Sides (one per path) and Comparisons (each path against the baseline),
// read through SideOf/Side, ComparisonOf/Against and Baseline.
type Summary struct {
	Case
	// Client is the client stack that did the case's ops (its runs'),
	// where known.
	Client *Client `json:"client,omitempty"`
	// Sides are every path the case measured with its pooled result: the
	// default baseline (127.0.0.1 TCP), the Unix socket, then the further
	// paths in the order they ran.
	Sides []PathSide `json:"sides"`
	// Comparisons are every side but the baseline against the baseline,
	// in the order of Sides.
	Comparisons []Comparison `json:"comparisons"`
	// NoisyBlocks lists the blocks flagged as noisy; Blocks counts all.
	Blocks      int          `json:"blocks"`
	NoisyBlocks []NoisyBlock `json:"noisy_blocks,omitempty"`
	// EndedBy says what ended the case: rounds, precision or max-duration.
	EndedBy string `json:"ended_by,omitempty"`
	// Warnings say in words why the numbers above may not be solid.
	Warnings []Warning `json:"warnings,omitempty"`
}

// Summarize pools the runs of each case per transport (merging their
// histograms), estimates the speedups from the block pairs, flags noisy
// blocks, and sets r.Summary, in the order the cases first appear in
// r.Runs. With more than one case, the verdicts' p-values are adjusted
// for the number of comparisons (Holm).
func (r *Report) Summarize() error {
	r.voidDisbelieved()
	type pool struct {
		sides map[drivers.Transport]*sidePool
		paths []drivers.Transport // in the order they first appear
		runs  []*Run
	}
	var order []Case
	pools := map[Case]*pool{}
	for i := range r.Runs {
		run := &r.Runs[i]
		p, ok := pools[run.Case]
		if !ok {
			p = &pool{sides: map[drivers.Transport]*sidePool{}}
			pools[run.Case] = p
			order = append(order, run.Case)
		}
		p.runs = append(p.runs, run)
		sp := p.sides[run.Transport]
		if sp == nil {
			sp = &sidePool{hist: NewHistogram(), phases: map[string]*hdrhistogram.Histogram{}}
			p.sides[run.Transport] = sp
			p.paths = append(p.paths, run.Transport)
		}
		if err := sp.add(run); err != nil {
			return fmt.Errorf("%s %s round %d: %w", run.Target, run.Transport, run.Round, err)
		}
	}
	r.Summary = r.Summary[:0]
	base := r.Config.Baseline
	if base == "" {
		base = DefaultBaseline()
	}
	for _, c := range order {
		p := pools[c]
		sum := Summary{Case: c, Client: p.runs[0].Client}
		for _, t := range p.paths {
			sum.Sides = append(sum.Sides, PathSide{Path: t, Side: p.sides[t].finish()})
		}
		orderSides(sum.Sides)
		sum.Comparisons = compareSides(p.runs, sum.Sides, base)
		sum.Blocks, sum.NoisyBlocks = flagNoisy(p.runs, p.paths)
		sum.EndedBy = endedBy(p.runs)
		for _, c := range sum.Comparisons {
			if w := roundSpread(p.runs, c.Baseline, c.Path); w.Kind != "" {
				sum.Warnings = append(sum.Warnings, w)
			}
		}
		// The likely cause to name when latencies spread: other load, or
		// a server of the user's that floats under a pinned client.
		unpinned := r.unpinnedServer(c.Target)
		cause := "look for other load on the machine."
		if unpinned.Kind != "" {
			sum.Warnings = append(sum.Warnings, unpinned)
			cause = "the likely cause is that this server is not pinned (see above)."
		}
		for _, ps := range sum.Sides { // every path of the case
			t := ps.Path
			if w := wideMiddle(t, p.sides[t].hist, r.Config.Placement.Mode, cause); w.Kind != "" {
				sum.Warnings = append(sum.Warnings, w)
			}
		}
		if w := noisyWarning(sum.Blocks, sum.NoisyBlocks, cause); w.Kind != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
		r.Summary = append(r.Summary, sum)
	}
	r.judge()
	r.comparePlacements()
	r.explainBehind()
	r.explainWakeups()
	r.compareStacks()
	r.Objectives = nil
	if o := r.Config.SLO; o != nil {
		r.Objectives = EvaluateSLO(r.Summary, *o, base)
	}
	return nil
}

// judge adjusts the sign tests' p-values over every comparison of every
// case (Holm) and sets each verdict.
func (r *Report) judge() {
	var ps []float64
	for _, s := range r.Summary {
		for _, c := range s.Comparisons {
			ps = append(ps, c.PValue)
		}
	}
	adj := Holm(ps)
	k := 0
	for i := range r.Summary {
		s := &r.Summary[i]
		for j := range s.Comparisons {
			c := &s.Comparisons[j]
			c.PValueHolm, k = adj[k], k+1
			base, _ := s.SideOf(c.Baseline)
			path, _ := s.SideOf(c.Path)
			c.judge(base, path)
		}
	}
}

// pairs are the paired block ratios of one case; byInstance splits them
// by server instance, in instance order.
type pairs struct {
	p50, mean  []float64
	p99, cpu   []float64 // where both blocks have them (atload.go)
	rounds     int
	byInstance []pairs
}

// BlocksOf returns run's blocks; a run without blocks (from an older
// dbsock) is one block.
func BlocksOf(run *Run) []Block {
	if len(run.Blocks) > 0 || run.Incomplete {
		return run.Blocks
	}
	l := run.Latency
	return []Block{{N: run.N, Errors: run.Errors, ElapsedNs: run.ElapsedNs, P50: l.P50, Mean: l.Mean, P99: l.P99}}
}

// blockPairs matches each round's blocks of paths num and den (TCP and
// Unix) by group index and returns their ratios num/den, in round and
// group order. A block with no successful op, or without its partner, is
// left out.
func blockPairs(runs []*Run, num, den drivers.Transport) pairs {
	type key struct{ instance, round, pair int }
	tcp, unix := map[key]Block{}, map[key]Block{}
	var keys []key
	for _, run := range runs {
		for _, b := range BlocksOf(run) {
			if b.N-b.Errors <= 0 || b.P50 <= 0 || b.Mean <= 0 {
				continue
			}
			k := key{run.Instance, run.Round, b.Pair}
			switch run.Transport {
			case num:
				tcp[k] = b
			case den:
				unix[k] = b
			default:
				continue
			}
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].instance != keys[j].instance {
			return keys[i].instance < keys[j].instance
		}
		if keys[i].round != keys[j].round {
			return keys[i].round < keys[j].round
		}
		return keys[i].pair < keys[j].pair
	})
	var out pairs
	seen := map[key]bool{}
	rounds := map[[2]int]bool{}
	instance := map[int]int{} // instance -> its index in byInstance
	for _, k := range keys {
		t, okT := tcp[k]
		u, okU := unix[k]
		if seen[k] || !okT || !okU {
			continue
		}
		seen[k] = true
		rounds[[2]int{k.instance, k.round}] = true
		p50, mean := float64(t.P50)/float64(u.P50), t.Mean/u.Mean
		out.p50, out.mean = append(out.p50, p50), append(out.mean, mean)
		i, ok := instance[k.instance]
		if !ok {
			i = len(out.byInstance)
			instance[k.instance] = i
			out.byInstance = append(out.byInstance, pairs{})
		}
		in := &out.byInstance[i]
		in.p50, in.mean = append(in.p50, p50), append(in.mean, mean)
		out.addTail(in, t, u)
	}
	out.rounds = len(rounds)
	return out
}

func logs(ratios []float64) []float64 {
	out := make([]float64, len(ratios))
	for i, r := range ratios {
		out[i] = math.Log(r)
	}
	return out
}

// NoisyBlock is a block flagged as noisy, for the report.
type NoisyBlock struct {
	Transport drivers.Transport `json:"transport"`
	Instance  int               `json:"instance,omitempty"`
	Round     int               `json:"round"`
	Pair      int               `json:"pair"`
	StartNs   int64             `json:"start_ns"`
	P50       int64             `json:"p50_ns"`
	// Z is the block's modified z-score among its transport's blocks.
	Z float64 `json:"z"`
}

// flagNoisy marks the blocks whose p50 is far from their path's other
// blocks in the case (Noisy), in runs and in the returned list, and
// counts all blocks, over every path of the case (paths).
func flagNoisy(runs []*Run, paths []drivers.Transport) (total int, noisy []NoisyBlock) {
	for _, t := range paths {
		var refs []*Block
		var rounds, instances []int
		var p50s []float64
		for _, run := range runs {
			if run.Transport != t {
				continue
			}
			for i := range run.Blocks {
				b := &run.Blocks[i]
				b.Noisy = false
				if b.P50 > 0 {
					refs, rounds, p50s = append(refs, b), append(rounds, run.Round), append(p50s, float64(b.P50))
					instances = append(instances, run.Instance)
				}
			}
		}
		total += len(refs)
		z := RobustZ(p50s)
		for i, flagged := range Noisy(p50s) {
			if flagged {
				b := refs[i]
				b.Noisy = true
				noisy = append(noisy, NoisyBlock{Transport: t, Instance: instances[i], Round: rounds[i], Pair: b.Pair, StartNs: b.StartNs, P50: b.P50, Z: z[i]})
			}
		}
	}
	// In the order they ran: by start, then round (blocks of a file or a
	// test may share a start).
	sort.SliceStable(noisy, func(i, j int) bool {
		if noisy[i].StartNs != noisy[j].StartNs {
			return noisy[i].StartNs < noisy[j].StartNs
		}
		return noisy[i].Round < noisy[j].Round
	})
	return total, noisy
}

// NoisyShare is the share of flagged blocks above which the report warns
// that the machine was noisy.
const NoisyShare = 0.10

// noisyWarning says when the machine was noisy, if more than NoisyShare of
// the blocks were flagged.
func noisyWarning(total int, noisy []NoisyBlock, cause string) Warning {
	if total == 0 || float64(len(noisy)) <= NoisyShare*float64(total) {
		return Warning{}
	}
	from, to := noisy[0].StartNs, noisy[len(noisy)-1].StartNs
	return Warn(NoisyMachine, "The machine was noisy: %d of %d blocks (%.0f%%) were far from their transport's typical p50, between %s and %s after the start. "+
		"The speedup is estimated from block pairs and its median resists such blocks, but %s",
		len(noisy), total, 100*float64(len(noisy))/float64(total),
		time.Duration(from).Round(time.Millisecond), time.Duration(to).Round(time.Millisecond), cause)
}

// cpuSaving is TCP's CPU per op minus Unix's; nil unless both were read.
func cpuSaving(tcp, unix *CPU) *CPUSaving {
	if tcp == nil || unix == nil || tcp.Ops == 0 || unix.Ops == 0 {
		return nil
	}
	s := &CPUSaving{ClientNsPerOp: tcp.ClientNsPerOp - unix.ClientNsPerOp}
	if tcp.ServerNsPerOp != nil && unix.ServerNsPerOp != nil {
		v := *tcp.ServerNsPerOp - *unix.ServerNsPerOp
		s.ServerNsPerOp = &v
	}
	return s
}

// endedBy is what ended the case, from its last round's runs.
func endedBy(runs []*Run) string {
	last, by := 0, ""
	for _, run := range runs {
		if run.EndedBy != "" && run.Round >= last {
			last, by = run.Round, run.EndedBy
		}
	}
	return by
}

// Cases returns the distinct cases of target in r.Summary, in order.
func (r *Report) Cases(target string) []Summary {
	var out []Summary
	for _, s := range r.Summary {
		if s.Target == target {
			out = append(out, s)
		}
	}
	return out
}

// Pooled merges the histograms of all runs of one case and transport.
func Pooled(r *Report, c Case, t drivers.Transport) (*hdrhistogram.Histogram, error) {
	h := NewHistogram()
	for _, run := range r.Runs {
		if run.Case != c || run.Transport != t {
			continue
		}
		rh, err := run.Hist()
		if err != nil {
			return nil, err
		}
		if rh != nil {
			h.Merge(rh)
		}
	}
	return h, nil
}

func ratio(tcp, unix float64) float64 {
	if tcp <= 0 || unix <= 0 {
		return 0
	}
	return tcp / unix
}

// UnstableSpread is the ratio between the largest and smallest per-round
// speedup above which the rounds are said to disagree.
const UnstableSpread = 1.15

// roundSpread warns when the paired p50 speedup of path over base moved by more than
// UnstableSpread between rounds. Blocks interleave the transports, so noise
// on the machine hits both sides of a pair alike; a speedup that still
// differs between rounds comes from the connections themselves (each round
// opens new ones), e.g. a server thread placed differently.
func roundSpread(runs []*Run, base, path drivers.Transport) Warning {
	for _, run := range runs {
		if run.Instance != runs[0].Instance {
			return Warning{} // the interval is over instances: it holds what moved between them
		}
	}
	byRound := map[int][]*Run{}
	var rounds []int
	for _, run := range runs {
		if _, ok := byRound[run.Round]; !ok {
			rounds = append(rounds, run.Round)
		}
		byRound[run.Round] = append(byRound[run.Round], run)
	}
	sort.Ints(rounds)
	var parts []string
	lo, hi := math.Inf(1), 0.0
	for _, rd := range rounds {
		p := blockPairs(byRound[rd], base, path)
		if len(p.p50) == 0 {
			continue
		}
		s := Median(p.p50)
		lo, hi = math.Min(lo, s), math.Max(hi, s)
		parts = append(parts, fmt.Sprintf("%.2f× in round %d", s, rd))
	}
	if len(parts) < 2 || hi <= UnstableSpread*lo {
		return Warning{}
	}
	what := "The p50 speedup"
	if base != DefaultBaseline() || path != Socket() {
		what = fmt.Sprintf("The p50 speedup of %s over %s", path.Label(), base.Label())
	}
	return Warn(RoundsDiffer, "%s differed between rounds (%s): each round opens new connections, so something about the connections "+
		"(where the server ran each one, its buffers) changed the answer; run more %s to average over it.", what, strings.Join(parts, ", "), setting.Rounds)
}

// BimodalSpread is the p75/p25 ratio above which the middle half of a
// distribution is said to be too wide to have one typical value.
const BimodalSpread = 2.0

// wideMiddle warns when the middle half of a transport's pooled latencies
// spans more than BimodalSpread: typically two modes (some ops served on the
// client's CPU, some waking the server on another), where p50 can land on
// either one.
func wideMiddle(t drivers.Transport, h *hdrhistogram.Histogram, placementMode, cause string) Warning {
	if h == nil || h.TotalCount() < 100 {
		return Warning{}
	}
	p25, p75 := h.ValueAtQuantile(25), h.ValueAtQuantile(75)
	if p25 <= 0 || float64(p75) <= BimodalSpread*float64(p25) {
		return Warning{}
	}
	advice := setting.Msg("pin client and server with %s same (or split) and run again.", setting.Placement)
	if placementMode != "" && placementMode != "none" {
		advice = setting.Msg("%s", cause)
	}
	return Warn(WideMiddle, "%s latencies have a wide middle: p25 %s, p75 %s (%.1f×). The distribution is likely bimodal, so p50 may land on either mode; %s",
		t.Label(), time.Duration(p25), time.Duration(p75), float64(p75)/float64(p25), advice)
}

// PairedP50 is the p50 speedup interval of one case's runs, as Summarize
// computes it (nil with too few block pairs).
func PairedP50(runs []Run) *Interval {
	ptrs := make([]*Run, len(runs))
	for i := range runs {
		ptrs[i] = &runs[i]
	}
	p := blockPairs(ptrs, DefaultBaseline(), Socket())
	return PairedSpeedup(p.p50, p.rounds)
}
