package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestRateAndObjectiveRefused: --rate and --slo that cannot run are
// refused before anything starts, in one line that says what to give: a
// limit too large to hold in its own words, a list of one rate repeated
// as such, too few ops per block to read the rate reached, and --rate
// auto as a list of rates is. --rate is written as --n is.
func TestRateAndObjectiveRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "0"}, `--rate 0 is out of range`},
		{[]string{"--rate", "2000,x"}, `--rate "x" is not a rate: give ops/s such as 3000, 10k or 2.5k`},
		{[]string{"--rate", "20M"}, `--rate 20M is out of range`},
		{[]string{"--rate", "1000,1000", "--slo", "p99<2ms"}, "--rate 1000,1000 gives one rate, 1000, twice: give different rates"},
		{[]string{"--rate", "10k,10000", "--slo", "p99<2ms"}, "--rate 10k,10000 gives one rate, 10000, twice"},
		{[]string{"--rate", "1000,2000", "--slo", "p99<99999999999999999999ms"}, `the limit 99999999999999999999ms is out of range; accepted: 1µs to 1m`},
		{[]string{"--rate", "1000", "--n", "10"}, "--n 10 at --rate 1000 gives each path 1 op in each of its 10 blocks: the rate a block reached is read from 100 ops or more"},
		{[]string{"--rate", "1000", "--n", "400", "--concurrency", "4"}, "raise --n to 1000 or more, or lower --blocks"},
		{[]string{"--rate", "50", "--duration", "1s"}, "--duration 1s at --rate 50 gives each path 5 ops in each of its 10 blocks"},
		// --rate auto is refused before anything starts, as a list is,
		// for whatever any step of its search cannot run.
		{[]string{"--rate", "auto", "--slo", "p99<2ms", "--scenario", "connect"}, "--rate auto (a search of rates from 1000 ops/s up, doubling): --rate runs the pk scenario open loop"},
		{[]string{"--rate", "auto", "--slo", "p99<2ms", "--duration", "1ms"}, "--rate auto (a search of rates from 1000 ops/s up, doubling): --rate 1000 leaves 0.001s between one worker's ops"},
		{[]string{"--rate", "auto", "--slo", "p99<2ms", "--n", "400"}, "--rate auto (a search of rates from 1000 ops/s up, doubling): --n 400 at --rate 1000 gives each path 40 ops"},
		{[]string{"--rate", "auto"}, "--rate auto searches for the highest rate within an objective: give --slo too"},
		{[]string{"--rate", "auto,2000", "--slo", "p99<2ms"}, "--rate auto searches on its own"},
		{[]string{"--slo", "p99<2ms"}, "--slo p99<2ms needs rates to find the highest within it"},
		{[]string{"--rate", "2000,4000", "--slo", "p95<2ms"}, `--slo "p95<2ms" is not an objective such as p99<2ms`},
	} {
		code, _, stderr := dbsock(t, append([]string{"run", "echo", "--provider", "local"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRateWrittenAsCounts: --rate takes what --n takes (10k, 2.5k, 1e4,
// 10_000), read by the same parser.
func TestRateWrittenAsCounts(t *testing.T) {
	for spec, want := range map[string][]float64{"10k": {10000}, "2.5k,1e4": {2500, 10000}, "10_000,2M": {10000, 2e6}, "1500": {1500}} {
		s := sweepOptions{rateSpecs: strings.Split(spec, ","), slo: "p99<2ms"}
		if len(want) == 1 {
			s.slo = ""
		}
		if err := s.parseRates(); err != nil {
			t.Errorf("--rate %s: %v", spec, err)
			continue
		}
		got := s.rates
		if s.rate != 0 {
			got = []float64{s.rate}
		}
		if !slices.Equal(got, want) {
			t.Errorf("--rate %s: %v, want %v", spec, got, want)
		}
	}
	if n, err := parseCount("2.5k"); err != nil || n != 2500 {
		t.Errorf("--n 2.5k: %d, %v", n, err)
	}
	if _, err := parseCount("2.5"); err == nil {
		t.Error("--n 2.5 taken; a count is whole")
	}
}

// TestRateSweepFindsHighestRate: a --rate list is a case per rate, and
// with --slo the report gives each path's highest rate within it: a rate
// one connection cannot offer is held by no path. --rate auto doubles the
// rate from 1,000/s until no path holds the objective, and its steps are
// the cases' rates.
func TestRateSweepFindsHighestRate(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	r := runJSON(t, "run", "redis", "--provider", "local", "--rate", "1000,300000", "--slo", "p99<50ms", "--n", "400", "--blocks", "4", "--warmup", "10", "--instances", "1")
	if len(r.Summary) != 2 || len(r.Objectives) != 1 {
		t.Fatalf("%d cases, %d objectives; want 2 and 1", len(r.Summary), len(r.Objectives))
	}
	for _, c := range r.Objectives[0].Capacities {
		// Whether 1,000/s is held depends on the machine (a busy one
		// delays the generator); 300,000/s never is.
		if len(c.Rates) != 2 || c.Rates[0] != 1000 || c.Rates[1] != 300000 || c.Held[1] || c.HighestRate != map[bool]float64{true: 1000}[c.Held[0]] {
			t.Errorf("%s: %+v; want 1,000 and 300,000/s, the second not held, the highest the first if held", c.Path, c)
		}
	}
	r = runJSON(t, "run", "redis", "--provider", "local", "--rate", "auto", "--slo", "p99<50ms", "--n", "400", "--blocks", "4", "--warmup", "10", "--instances", "1")
	if len(r.Objectives) != 1 || !r.Config.RateAuto {
		t.Fatalf("auto: %d objectives, rate_auto %v", len(r.Objectives), r.Config.RateAuto)
	}
	for _, c := range r.Objectives[0].Capacities {
		n := len(c.Rates)
		if n < 1 || c.Rates[0] != 1000 || c.Held[n-1] || c.Rates[n-1] != 1000*float64(int(1)<<(n-1)) || c.HighestRate >= c.Rates[n-1] {
			t.Errorf("auto, %s: %+v; want doubling from 1,000/s, ending at a rate no path held", c.Path, c)
		}
	}
}
