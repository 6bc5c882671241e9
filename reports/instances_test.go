package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// A report over server instances says how its interval was computed, lists
// the instance speedups and names instances, not rounds.
func TestMarkdownOverInstances(t *testing.T) {
	r := fixture(t)
	base := r.Runs[:2] // round 1: TCP then Unix
	r.Runs = nil
	for inst := 1; inst <= 6; inst++ {
		for _, run := range base {
			run.Instance, run.Round = inst, 1
			run.Blocks = append([]results.Block(nil), run.Blocks...)
			if run.Transport == drivers.TCP {
				for i := range run.Blocks {
					run.Blocks[i].P50 += int64(inst * 100) // each instance its own speedup
				}
			}
			r.Runs = append(r.Runs, run)
		}
	}
	r.Config.Instances, r.Config.Rounds = 6, 1
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"in 6 server instances (each server dbsock started was restarted between them, its data kept), with 1 round each",
		"distribution-free interval of a median from order statistics over the instances",
		"Kalibera and Jones",
		"Speedup over 6 server instances (p50 speedups ",
		"sign test over instances p = 0.0313. **Verdict: Unix faster",
		"p50 by server instance (µs): instance 1 TCP",
		"instances=6, rounds=1",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if s := r.Summary[0]; s.Against(drivers.Unix).SpeedupP50CI == nil || s.Against(drivers.Unix).SpeedupP50CI.Instances != 6 || len(s.Against(drivers.Unix).InstanceSpeedups) != 6 {
		t.Errorf("summary: %+v", s.Against(drivers.Unix).SpeedupP50CI)
	}
}
