package reports

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/results"
)

// How the charts (and the .hgrm files) name a case.

// title is a case's percentile panel's title: its name and its p50s.
func title(r *results.Report, s results.Summary) string {
	name := s.Target
	for _, t := range r.Targets {
		if t.Name == s.Target && t.Server.Product != "" {
			name = fmt.Sprintf("%s (%s)", s.Target, t.Server)
		}
	}
	label := name
	if len(r.Config.Clients) > 0 {
		label = s.Target + " · " + figureCaseLabel(r, s)
	} else if len(r.Summary) > len(r.Targets) || !s.Plain() {
		label = caseName(r, s.Case)
	}
	tcp, unix := s.Side(results.DefaultBaseline()), s.Side(results.Socket())
	return fmt.Sprintf("%s\np50 TCP %s, Unix %s", label, fmtLatency(float64(tcp.Latency.P50)), fmtLatency(float64(unix.Latency.P50)))
}

// caseName names a case in a chart or a file name: its target, with its
// client stack when the run measured several ("redis python"), and its
// short label when the run has several cases per target and stack or the
// case is not the plain lookup.
func caseName(r *results.Report, c results.Case) string {
	several := len(r.Summary) > len(r.Targets)
	stack := ""
	if len(r.Config.Clients) > 0 {
		stack, _, _ = strings.Cut(c.Stack, ":") // cmd:COMMAND is "cmd"
		stack = " " + cmp.Or(stack, "go")
		several = casesPerStack(r) > 1
	}
	if several || !c.Plain() {
		return shortLabel(c) + stack
	}
	return c.Target + stack
}

// shortLabel names a case in a few characters: "redis pk c8 16 B".
func shortLabel(c results.Case) string {
	s := fmt.Sprintf("%s %s", c.Target, c.Scenario)
	if c.Concurrency > 1 {
		s += fmt.Sprintf(" c%d", c.Concurrency)
	}
	s += " " + results.FormatSize(c.ValueSize)
	if c.Rate > 0 {
		s += fmt.Sprintf(" @%g/s", c.Rate)
	}
	if c.Pipeline > 1 {
		s += fmt.Sprintf(" p%d", c.Pipeline)
	}
	return s
}
