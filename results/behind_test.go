package results

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestBehindSaysWhy: a case whose generator fell behind says why from
// its CPU figures: hand-computed, at 3,000/s a client of 280 µs per op
// needs 84% of CPU 0, a server of 60 µs 18% of it, together 102% of the
// CPU they share; split, the client alone is out of CPU; with both idle
// (10 µs and 20 µs per op: 3% and 6%), the machine's own lateness.
func TestBehindSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, server float64
		serverCPUs     string
		want           []string
	}{
		{"shared", 280e3, 60e3, "0", []string{"the client spent 280µs of CPU per op, 84% of its CPU 0 at this rate, the server 60µs, 18% of its CPU 0",
			"16 workers on 1 client CPU", "client and server share CPU 0 and together need 102% of it. Try --placement split"}},
		{"split", 280e3, 60e3, "1", []string{"the server 60µs, 18% of its CPU 1", "the client is out of CPU"}},
		{"idle", 10e3, 20e3, "1", []string{"neither was out of CPU, so the lateness is the machine's own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{}
			r.Environment.NumCPU = 2
			r.Config.Placement = Placement{Mode: "custom", ClientCPUs: "0", ServerCPUs: tc.serverCPUs}
			server := tc.server
			behind := &Generator{OfferedRate: 3000, AchievedRate: 2400, FellBehind: true, LateP99Ns: 3e6}
			r.Summary = []Summary{{Case: Case{Target: "postgres", Concurrency: 16, Rate: 3000}, Sides: []PathSide{
				{Path: drivers.TCP, Side: Side{Generator: behind, CPU: &CPU{ClientNsPerOp: tc.client, ServerNsPerOp: &server}}},
				{Path: drivers.Unix, Side: Side{Generator: &Generator{OfferedRate: 3000, AchievedRate: 3000}}}}}}
			r.explainBehind()
			if len(r.Summary[0].Warnings) != 1 {
				t.Fatalf("%d warnings, want 1", len(r.Summary[0].Warnings))
			}
			got := r.Summary[0].Warnings[0].String()
			for _, w := range append(tc.want, "The generator fell behind the offered 3,000/s: over tcp it reached 2,400/s (the generator's own lateness p99 3ms)") {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}
