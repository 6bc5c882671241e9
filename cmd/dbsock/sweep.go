package main

import (
	"slices"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/scenarios"
)

// Limits of the sweep flags.
const (
	maxConcurrency = 4096
	maxValueSize   = 16 << 20 // MongoDB's document limit; MySQL's default packet size
	maxRate        = 10_000_000
)

// sweepOptions are the flags that choose which cases run.
type sweepOptions struct {
	scenarios   []string
	concurrency []int
	sizeSpecs   []string
	sizes       []int
	duration    time.Duration
	rate        float64
	pipelines   []int
	flags       *pflag.FlagSet
}

func (s *sweepOptions) bind(f *pflag.FlagSet) {
	s.flags = f
	f.StringSliceVar(&s.scenarios, "scenario", []string{scenarios.PK}, "pk (one kept connection per worker) and/or connect (a new connection per op); a list or repeated")
	f.IntSliceVar(&s.concurrency, "concurrency", []int{1}, "workers per transport, each with its own connection; a list such as 1,8,64 sweeps")
	f.StringSliceVar(&s.sizeSpecs, "value-size", nil, "size of the looked-up value, e.g. 16,1KiB,64KiB,1MiB (default: the target's own small value)")
	f.DurationVar(&s.duration, "duration", 0, "run each transport and round for this long instead of --n ops")
	f.IntSliceVar(&s.pipelines, "pipeline", nil, "send this many lookups per op in one round trip (redis: go-redis pipeline; postgres: pgx batch); a list such as 1,16,128 sweeps")
	f.Float64Var(&s.rate, "rate", 0, "open loop: this many ops/s per transport, latency from the intended start (scenario pk)")
}

// validate checks the sweep flags and parses the sizes. nChanged says
// whether --n was given, which --duration replaces.
func (s *sweepOptions) validate(nChanged bool) error {
	if s.flags != nil && s.flags.Changed("duration") && s.duration == 0 {
		return usagef("--duration 0s is out of range; accepted: 1ms to 24h (leave it out to run --n ops)")
	}
	if s.flags != nil && s.flags.Changed("rate") && s.rate == 0 {
		return usagef("--rate 0 is out of range; accepted: more than 0 up to %d ops/s (leave it out for a closed loop)", maxRate)
	}
	seen := map[string]bool{}
	var scen []string
	for _, sc := range s.scenarios {
		if err := oneOf("scenario", sc, scenarios.Names...); err != nil {
			return err
		}
		if !seen[sc] {
			seen[sc] = true
			scen = append(scen, sc)
		}
	}
	s.scenarios = scen
	if len(s.concurrency) == 0 {
		return usagef("--concurrency is empty; give one or more worker counts, e.g. 1 or 1,8,64")
	}
	var conc []int // a value given twice is one case
	for _, c := range s.concurrency {
		if err := intRange("concurrency", c, 1, maxConcurrency); err != nil {
			return err
		}
		if !slices.Contains(conc, c) {
			conc = append(conc, c)
		}
	}
	s.concurrency = conc
	var depths []int
	for _, d := range s.pipelines {
		if err := intRange("pipeline", d, 1, 10000); err != nil {
			return err
		}
		if !slices.Contains(depths, d) {
			depths = append(depths, d)
		}
	}
	s.pipelines = depths
	s.sizes = nil
	for _, spec := range s.sizeSpecs {
		n, err := humanize.ParseBytes(spec)
		if err != nil {
			return usagef("--value-size %q is not a size such as 16, 1KiB or 1MiB", spec)
		}
		if n < 1 || n > maxValueSize {
			return usagef("--value-size %q is out of range; accepted: 1 B to 16 MiB", spec)
		}
		if !slices.Contains(s.sizes, int(n)) {
			s.sizes = append(s.sizes, int(n))
		}
	}
	if s.duration != 0 {
		if nChanged {
			return usagef("give --n or --duration, not both")
		}
		if s.duration < time.Millisecond || s.duration > 24*time.Hour {
			return usagef("--duration %s is out of range; accepted: 1ms to 24h", s.duration)
		}
	}
	if s.rate != 0 {
		if !(s.rate > 0 && s.rate <= maxRate) { // NaN fails both

			return usagef("--rate %g is out of range; accepted: more than 0 up to %d ops/s", s.rate, maxRate)
		}
		for _, sc := range s.scenarios {
			if sc != scenarios.PK {
				return usagef("--rate runs the pk scenario open loop; it does not apply to --scenario %s", sc)
			}
		}
	}
	return nil
}

// maxOpInterval is the longest wait between one worker's ops that --rate
// may ask for.
const maxOpInterval = time.Hour

// checkRate refuses an open-loop rate so low that a worker would wait
// longer than maxOpInterval between ops, or that no second op would be due
// within a block of --duration (blocks block pairs per round).
func (s *sweepOptions) checkRate(blocks int) error {
	if s.rate == 0 {
		return nil
	}
	workers := slices.Max(s.concurrency)
	interval := float64(workers) / s.rate // seconds between one worker's ops
	if interval > maxOpInterval.Seconds() {
		return usagef("--rate %g with %d worker(s) leaves %.3gs between one worker's ops, more than %s; raise --rate", s.rate, workers, interval, maxOpInterval)
	}
	if s.duration > 0 && blocks > 0 {
		block := s.duration / time.Duration(blocks)
		if interval > block.Seconds() {
			return usagef("--rate %g leaves %.3gs between one worker's ops, longer than each of the %d blocks of --duration %s (%s): "+
				"raise --rate, lengthen --duration or lower --blocks", s.rate, interval, blocks, s.duration, block)
		}
	}
	return nil
}

// totalOps is how many timed ops a run of n ops per worker will do, for the
// progress bar.
func (s *sweepOptions) totalOps(targets, rounds, n int) int64 {
	workers := 0
	for _, c := range s.concurrency {
		workers += c
	}
	sizes := max(len(s.sizes), 1)
	depths := max(len(s.pipelines), 1)
	return int64(targets) * int64(len(s.scenarios)) * int64(sizes) * int64(depths) * int64(workers) * int64(rounds) * 2 * int64(n)
}
