package main

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestRateAndObjectiveRefused: --rate and --slo that cannot run are
// refused before anything starts, in one line that says what to give.
func TestRateAndObjectiveRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "0"}, `--rate 0 is out of range`},
		{[]string{"--rate", "2000,x"}, `--rate x is out of range`},
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

// TestRateSweepFindsHighestRate: a --rate list is a case per rate, and
// with --slo the report gives each path's highest rate within it: a rate
// one connection cannot offer is held by no path. --rate auto doubles the
// rate from 1,000/s until no path holds the objective, and its steps are
// the cases' rates.
func TestRateSweepFindsHighestRate(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	r := runJSON(t, "run", "redis", "--provider", "local", "--rate", "1000,300000", "--slo", "p99<50ms", "--n", "400", "--warmup", "10", "--instances", "1")
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
	r = runJSON(t, "run", "redis", "--provider", "local", "--rate", "auto", "--slo", "p99<50ms", "--n", "400", "--warmup", "10", "--instances", "1")
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
