package reports

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// TestStackTitlesAcrossTargets: a picture of one stack's cases on several
// targets names the stack without a library (each target's is its own),
// a panel of one target names that target's library and its worker model,
// and the capacity line of each stack's case says which stack it is.
func TestStackTitlesAcrossTargets(t *testing.T) {
	py := func(target, lib string) results.Summary {
		var s results.Summary
		s.Case = results.Case{Target: target, Stack: "python", Rate: 3000}
		s.Client = &results.Client{Language: "python", RuntimeVersion: "3.11.2", Library: lib, LibraryVersion: "1", Workers: "processes"}
		return s
	}
	r := &results.Report{Summary: []results.Summary{py("redis", "redis-py"), py("postgres", "psycopg2")}}
	if got := stackTitle(r, "python"); strings.Contains(got, "redis-py") || strings.Contains(got, "psycopg2") || !strings.Contains(got, "a process per connection") {
		t.Errorf("across targets: %q; want the language and the model, no library", got)
	}
	if name, model := stackParts(r.Summary[1]); !strings.Contains(name, "psycopg2 1") || model != "a process per connection" {
		t.Errorf("postgres's panel: %q, %q", name, model)
	}
	s := r.Summary[1]
	cpu := func(ns float64) *results.CPU { return &results.CPU{ServerNsPerOp: &ns} }
	gen := &results.Generator{OfferedRate: 3000, AchievedRate: 3000}
	s.Sides = []results.PathSide{{Path: drivers.TCP, Side: results.Side{CPU: cpu(80e3), Generator: gen}}, {Path: drivers.Unix, Side: results.Side{CPU: cpu(70e3), Generator: gen}}}
	if line := coresLine(&s, drivers.TCP, 2); !strings.HasPrefix(line, "postgres from python at 3,000/s: 0.240 server cores over TCP") {
		t.Errorf("capacity line %q; want it to name the stack", line)
	}
}
