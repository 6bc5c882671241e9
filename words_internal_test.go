package dbsock

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// TestWarningsNameTheOptions: Compare words a report's warnings and errors
// with CompareOptions' fields and names no flag of dbsock run.
func TestWarningsNameTheOptions(t *testing.T) {
	rep := roundsDiffer(t)
	rep.Targets[0].Fail(setting.Err("redis over TCP did not answer within 10s (%s)", setting.OpTimeout))
	rep.Word(optionName)
	got := strings.Join(results.Texts(rep.Summary[0].Warnings), "\n") + "\n" + rep.Targets[0].Error
	for _, want := range []string{"1.20× in round 1, 2.00× in round 2", "run more CompareOptions.Rounds to average", "within 10s (CompareOptions.OpTimeout)"} {
		if !strings.Contains(got, want) {
			t.Errorf("worded for the library, %q does not say %q", got, want)
		}
	}
	if strings.Contains(got, "--") {
		t.Errorf("worded for the library, %q names a flag", got)
	}
}

// roundsDiffer is a report whose case's speedup moved between its two
// rounds (1.2x, then 2x), summarized: the engine warns of it, naming the
// rounds setting.
func roundsDiffer(t *testing.T) *results.Report {
	t.Helper()
	c := results.Case{Target: "redis", Scenario: "pk", Concurrency: 1}
	rep := &results.Report{Targets: []results.Target{{Name: "redis"}}}
	for round, tcp := range map[int]int64{1: 12000, 2: 20000} {
		for tr, p50 := range map[drivers.Transport]int64{drivers.TCP: tcp, drivers.Unix: 10000} {
			run := results.Run{Case: c, Transport: tr, Round: round, N: 300}
			for pair := range 3 {
				run.Blocks = append(run.Blocks, results.Block{Pair: pair, N: 100, P50: p50, Mean: float64(p50)})
			}
			rep.Runs = append(rep.Runs, run)
		}
	}
	if err := rep.Summarize(); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestVerdictsNameNoFlag: the verdicts Compare fills in (words.Fill) and
// the Markdown of its report tell a library user what more to measure in
// the run's own terms, never as a flag of dbsock run: over too few server
// instances for an interval, over enough for an interval that straddles
// 1, and over one instance with too few block pairs.
func TestVerdictsNameNoFlag(t *testing.T) {
	for _, tt := range []struct {
		name              string
		instances, blocks int
		kind              results.VerdictKind
		want              string
	}{
		{"too few instances", 3, 3, results.TooFewInstances, "not enough server instances"},
		{"undecided over instances", 9, 3, results.Undecided, "(more server instances) would likely settle it"},
		{"too few pairs", 1, 1, results.TooFewPairs, "not enough block pairs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := overInstances(t, tt.instances, tt.blocks)
			words.Fill(rep)
			rep.Word(optionName)
			s := rep.Summary[0]
			c := s.ComparisonOf(drivers.Unix)
			if c == nil || c.VerdictKind != tt.kind || !strings.Contains(c.Verdict, tt.want) {
				t.Fatalf("comparison %+v: want a verdict of kind %s saying %q", c, tt.kind, tt.want)
			}
			for _, c := range s.Comparisons {
				if strings.Contains(c.Verdict, "--") {
					t.Errorf("%s's verdict %q names a flag", c.Path, c.Verdict)
				}
			}
			var md bytes.Buffer
			if err := reports.Write(&md, "markdown", rep); err != nil {
				t.Fatal(err)
			}
			if flag := regexp.MustCompile(`--[a-z]`).FindString(md.String()); flag != "" {
				t.Errorf("the report's Markdown names a flag (%q):\n%s", flag, md.String())
			}
		})
	}
}

// overInstances is a summarized report of one case over k server
// instances of one round of blocks block pairs each, whose Unix speedup
// is 1.1× on odd instances and 0.9× on even ones: an interval that
// straddles 1.
func overInstances(t *testing.T, k, blocks int) *results.Report {
	t.Helper()
	c := results.Case{Target: "redis", Scenario: "pk", Concurrency: 1}
	rep := &results.Report{Targets: []results.Target{{Name: "redis"}}, Config: results.Config{Instances: k, Rounds: 1, Blocks: blocks, N: 100 * blocks}}
	for inst := 1; inst <= k; inst++ {
		unix := int64(9000 + 2000*(inst%2))
		for tr, p50 := range map[drivers.Transport]int64{drivers.TCP: 10000, drivers.Unix: unix} {
			run := results.Run{Case: c, Transport: tr, Instance: inst, Round: 1, N: int64(100 * blocks)}
			for pair := range blocks {
				run.Blocks = append(run.Blocks, results.Block{Pair: pair, N: 100, P50: p50 + int64(pair), Mean: float64(p50)})
			}
			rep.Runs = append(rep.Runs, run)
		}
	}
	if err := rep.Summarize(); err != nil {
		t.Fatal(err)
	}
	return rep
}
