package main

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/results"
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
	rateSpecs   []string
	rate        float64   // the one rate asked for (0: none, or a sweep)
	rates       []float64 // a sweep's rates, each a case of its own
	rateAuto    bool      // --rate auto: a bounded search (pipeline.RateSearch)
	slo         string
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
	f.StringSliceVar(&s.rateSpecs, "rate", nil, "open loop: this many ops/s per transport, latency from the intended start (scenario pk), written as --n is (3000, 10k, 2.5k); a list such as 2000,4000,8000 sweeps (each rate a case), and auto searches for each path's highest rate within --slo")
	f.StringVar(&s.slo, "slo", "", "a latency objective such as 'p99<2ms' (p50, p99 or p99.9; µs or ms): with a --rate sweep or --rate auto, the report gives each path's highest rate within it and the headroom between paths")
}

// parse reads the sweep flags: the sizes, and each list without its
// repeats (a value given twice is one case). Whether the sweep can run is
// the plan's to say.
func (s *sweepOptions) parse(nChanged bool) error {
	if s.flags != nil && s.flags.Changed("duration") && s.duration == 0 {
		return usagef("--duration 0s is out of range; accepted: %s (leave it out to run --n ops)", scenarios.AcceptedDuration())
	}
	if err := s.parseRates(); err != nil {
		return err
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

// rateWords says what --rate takes, for its errors and help.
const rateWords = "ops/s such as 3000, 10k or 2.5k, a list of them, or auto"

// parseRates reads --rate (a rate, a list, or auto) and --slo.
func (s *sweepOptions) parseRates() error {
	s.rate, s.rates, s.rateAuto = 0, nil, false
	if s.flags != nil && s.flags.Changed("rate") && len(s.rateSpecs) == 0 {
		return usagef("--rate is empty; give a rate such as 3000, a list such as 2000,4000,8000, or auto")
	}
	var repeated []string // the specs that gave a rate again
	for _, spec := range s.rateSpecs {
		if spec == "auto" {
			if len(s.rateSpecs) > 1 {
				return usagef("--rate auto searches on its own: give it alone, or a list of rates without auto")
			}
			s.rateAuto = true
			continue
		}
		r, err := parseAmount(spec)
		if err != nil {
			return usagef("--rate %q is not a rate: give %s", spec, rateWords)
		}
		if !(r > 0 && r <= scenarios.MaxRate) {
			return usagef("--rate %s is out of range; accepted: %s, a list of them, or auto (leave it out for a closed loop)", spec, scenarios.AcceptedRate())
		}
		if slices.Contains(s.rates, r) {
			repeated = append(repeated, spec)
			continue
		}
		s.rates = append(s.rates, r)
	}
	if len(s.rates) == 1 {
		s.rate, s.rates = s.rates[0], nil
	}
	return s.parseObjective(repeated)
}

// parseObjective reads --slo against the rates parseRates read; repeated
// are the --rate values that gave a rate again: a list of one rate given
// over and over is named as such.
func (s *sweepOptions) parseObjective(repeated []string) error {
	if s.slo != "" {
		if _, err := results.ParseSLO(s.slo); err != nil {
			return usagef("--slo %v", err)
		}
	}
	if s.rateAuto && s.slo == "" {
		return usagef("--rate auto searches for the highest rate within an objective: give --slo too, e.g. --slo 'p99<2ms'")
	}
	if s.slo == "" || s.rateAuto || len(s.rates) > 0 {
		return nil
	}
	if len(repeated) > 0 {
		times := "twice"
		if n := len(s.rateSpecs); n > 2 {
			times = strconv.Itoa(n) + " times"
		}
		return usagef("--slo %s needs two or more rates to find the highest within it, and --rate %s gives one rate, %s, %s: give different rates such as 2000,4000,8000, or --rate auto",
			s.slo, strings.Join(s.rateSpecs, ","), strconv.FormatFloat(s.rate, 'f', -1, 64), times)
	}
	return usagef("--slo %s needs rates to find the highest within it: give --rate a list such as 2000,4000,8000, or --rate auto", s.slo)
}

// atRate says whether the run is an open loop (a rate, a sweep of them,
// or a search).
func (s *sweepOptions) atRate() bool { return s.rate > 0 || len(s.rates) > 0 || s.rateAuto }

// maxRate is the highest rate the run offers before a search.
func (s *sweepOptions) maxRate() float64 {
	r := s.rate
	for _, x := range s.rates {
		r = max(r, x)
	}
	return r
}

// objective is --slo, parsed (nil without one).
func (s *sweepOptions) objective() *results.SLO {
	if s.slo == "" {
		return nil
	}
	o, err := results.ParseSLO(s.slo)
	if err != nil {
		return nil // parseRates refused it
	}
	return &o
}
