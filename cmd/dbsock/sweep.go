package main

import (
	"math"
	"slices"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
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
	f.IntSliceVar(&s.pipelines, "pipeline", nil, "send this many lookups per op in one round trip ("+
		perTarget(func(h targets.Help) string { return h.Pipeline })+"); a list such as 1,16,128 sweeps")
	f.Float64Var(&s.rate, "rate", 0, "open loop: this many ops/s per transport, latency from the intended start (scenario pk)")
}

// parse reads the sweep flags: the sizes, and each list without its
// repeats (a value given twice is one case). Whether the sweep can run is
// the plan's to say.
func (s *sweepOptions) parse(nChanged bool) error {
	if s.flags != nil && s.flags.Changed("duration") && s.duration == 0 {
		return usagef("--duration 0s is out of range; accepted: %s (leave it out to run --n ops)", scenarios.AcceptedDuration())
	}
	if s.flags != nil && s.flags.Changed("rate") && s.rate == 0 {
		return usagef("--rate 0 is out of range; accepted: %s (leave it out for a closed loop)", scenarios.AcceptedRate())
	}
	if s.duration != 0 && nChanged {
		return usagef("give --n or --duration, not both")
	}
	if len(s.concurrency) == 0 {
		return usagef("--concurrency is empty; give one or more worker counts, e.g. 1 or 1,8,64")
	}
	s.scenarios, s.concurrency, s.pipelines = unique(s.scenarios), unique(s.concurrency), unique(s.pipelines)
	s.sizes = nil
	for _, spec := range s.sizeSpecs {
		n, err := humanize.ParseBytes(spec)
		if err != nil || n > math.MaxInt32 {
			return usagef("--value-size %q is not a size such as 16, 1KiB or 1MiB", spec)
		}
		if !slices.Contains(s.sizes, int(n)) {
			s.sizes = append(s.sizes, int(n))
		}
	}
	return nil
}

// unique is list without its repeats, in order.
func unique[T comparable](list []T) []T {
	var out []T
	for _, v := range list {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
