package dbsock

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
)

// TestWarningsNameTheOptions: Compare words a report's warnings and errors
// with CompareOptions' fields and names no flag of dbsock run.
func TestWarningsNameTheOptions(t *testing.T) {
	rep := roundsDiffer(t)
	rep.Targets[0].Fail(setting.Errorf("redis over TCP did not answer within 10s (%s)", setting.OpTimeout))
	rep.Word(compareField)
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
