package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// loadReport is a run of redis at 3,000/s whose socket has a lower p99 in
// every block pair and spends 0.8 of TCP's server CPU per op; behind
// makes the TCP side's generator fall behind.
func loadReport(t *testing.T, behind bool) *results.Report {
	t.Helper()
	mk := func(tr drivers.Transport, instance int) results.Run {
		var blocks []results.Block
		for i := 0; i < 10; i++ {
			b := results.Block{Pair: i, N: 1500, P50: 30_000, Mean: 40_000, P99: 400_000, ServerCPUNs: 1500 * 60_000, ElapsedNs: 5e8, LagP99Ns: 90_000}
			if tr == drivers.Unix {
				b.P50, b.Mean, b.P99, b.ServerCPUNs = 20_000, 30_000, 300_000, 1500*48_000
			}
			if behind && tr == drivers.TCP {
				b.ElapsedNs = 1e9
			}
			blocks = append(blocks, b)
		}
		server, csw := int64(15000*60_000), int64(15000*2)
		if tr == drivers.Unix {
			server, csw = 15000*48_000, 15000*3
		}
		run := results.Run{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 16, Rate: 3000}, Transport: tr, Instance: instance, Round: 1, N: 15000,
			Blocks: blocks, Timing: results.Timing{Latency: results.Latency{P50: blocks[0].P50, Mean: blocks[0].Mean, P99: blocks[0].P99}, ElapsedNs: 5e9},
			Connection: results.Connection{TransportVerified: true}, CPU: results.NewCPU(15000, 15000*9_000, csw, &server, nil, "test")}
		run.Generator = results.NewGenerator(3000, blocks, results.Latency{P50: 20_000})
		h := results.NewHistogram()
		for i := 0; i < 100; i++ {
			v := blocks[0].P50
			if i >= 98 {
				v = blocks[0].P99
			}
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := run.SetHistogram(h); err != nil {
			t.Fatal(err)
		}
		return run
	}
	r := &results.Report{SchemaVersion: results.SchemaVersion}
	for in := 1; in <= 6; in++ {
		r.Runs = append(r.Runs, mk(drivers.TCP, in), mk(drivers.Unix, in))
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLoadHeadline: a run at a rate heads its report with the offered and
// reached rate, p50, p99 and lookups per server core of each path, each
// comparison with its interval, and what moved; the cores each path costs
// at the rate, with the client's CPU and context switches per op; a
// generator that fell behind names no winner.
func TestLoadHeadline(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, loadReport(t, false)); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(b.String(), "## Details", 2)[0]
	for _, want := range []string{
		"| target | server | offered | reached (TCP / Unix) | p50 (TCP / Unix) | p50 speedup (95% CI) | p99 (TCP / Unix) | p99 speedup (95% CI) | lookups per server core (TCP / Unix) | capacity gain (95% CI) | what moved |",
		"| 3,000/s | 3,000 / 3,000 | 30.0 / 20.0 µs | 1.50× (1.50–1.50) | 400 / 300 µs | 1.33× (1.33–1.33) | 16,667 / 20,833 | 1.25× (1.25–1.25) | p50: Unix better; p99: Unix better; capacity: Unix better |",
		"redis at 3,000/s: 0.180 server cores over TCP, 0.144 over the Unix socket; the socket serves 25% more lookups per server core (95% CI +25% to +25%, 60 block pairs)",
		"The generator: schedule lag p50 20 µs / 20 µs, p99 90 µs / 90 µs (TCP / Unix); its own CPU per op 9.0 / 9.0 µs, its context switches per op 2.00 / 3.00.",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("headline lacks %q:\n%s", want, head)
		}
	}
	b.Reset()
	if err := Markdown(&b, loadReport(t, true)); err != nil {
		t.Fatal(err)
	}
	head = strings.SplitN(b.String(), "## Details", 2)[0]
	if !strings.Contains(head, "| 1,500 (behind) / 3,000 |") || !strings.Contains(head, "| the generator fell behind: no winner at this rate |") || strings.Contains(head, "Unix better") {
		t.Errorf("a generator that fell behind:\n%s", head)
	}
}

// TestObjectivesTable: each path's highest rate within the objective is
// the one results gives (every lower rate held too); a rate held above a
// miss is said beside it, not counted, and a path that held every rate
// asks for a higher one.
func TestObjectivesTable(t *testing.T) {
	slo := results.SLO{Percentile: "p99", LimitNs: 2_000_000}
	side := func(p99 int64) results.Side {
		return results.Side{N: 100, Latency: results.Latency{P99: p99}, Generator: &results.Generator{OfferedRate: 1, AchievedRate: 1}}
	}
	var summary []results.Summary
	for _, x := range []struct {
		rate      float64
		tcp, unix int64
	}{{1000, 1e6, 3e6}, {2000, 1e6, 1e6}, {4000, 3e6, 1e6}} {
		summary = append(summary, results.Summary{Case: results.Case{Target: "redis", Scenario: "pk", Rate: x.rate},
			Sides: []results.PathSide{{Path: drivers.TCP, Side: side(x.tcp)}, {Path: drivers.Unix, Side: side(x.unix)}}})
	}
	r := &results.Report{Config: results.Config{Sweep: results.Sweep{SLO: &slo}}, Summary: summary, Objectives: results.EvaluateSLO(summary, slo, drivers.TCP)}
	var b strings.Builder
	writeObjectives(&b, r)
	got := b.String()
	for _, want := range []string{
		"its highest rate is the highest it held with every lower rate held too",
		"| TCP | 2,000/s | 1,000 ✓, 2,000 ✓, 4,000 ✗ | (baseline) |",
		"| Unix | none (also held 4,000/s, above a rate it missed: not counted) | 1,000 ✗, 2,000 ✓, 4,000 ✓ | – |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("objectives lack %q:\n%s", want, got)
		}
	}
}

// TestObjectivesHeadroomBound: a headroom read from a path that held every
// rate measured is a lower bound (≥), one against a baseline that held
// every rate an upper bound (≤); the rule says a failed op is within no
// limit.
func TestObjectivesHeadroomBound(t *testing.T) {
	slo := results.SLO{Percentile: "p99", LimitNs: 2_000_000}
	side := func(p99 int64) results.Side {
		return results.Side{N: 100, Latency: results.Latency{P99: p99}, Generator: &results.Generator{OfferedRate: 1, AchievedRate: 1}}
	}
	for _, tt := range []struct {
		tcp, unix [2]int64
		want      string
	}{
		{[2]int64{1e6, 3e6}, [2]int64{1e6, 1e6}, "| Unix | ≥ 2,000/s (every rate held: measure higher) | 1,000 ✓, 2,000 ✓ | ≥ 2.00× (it held every rate) |"},
		{[2]int64{1e6, 1e6}, [2]int64{1e6, 3e6}, "| Unix | 1,000/s | 1,000 ✓, 2,000 ✗ | ≤ 0.50× (the baseline held every rate) |"},
	} {
		var summary []results.Summary
		for i, rate := range []float64{1000, 2000} {
			summary = append(summary, results.Summary{Case: results.Case{Target: "redis", Scenario: "pk", Rate: rate},
				Sides: []results.PathSide{{Path: drivers.TCP, Side: side(tt.tcp[i])}, {Path: drivers.Unix, Side: side(tt.unix[i])}}})
		}
		r := &results.Report{Config: results.Config{Sweep: results.Sweep{SLO: &slo}}, Summary: summary, Objectives: results.EvaluateSLO(summary, slo, drivers.TCP)}
		var b strings.Builder
		writeObjectives(&b, r)
		if got := b.String(); !strings.Contains(got, tt.want) || !strings.Contains(got, "at most 1% of its ops failed (a failed op is within no limit)") {
			t.Errorf("objectives lack %q, or the rule on failed ops:\n%s", tt.want, got)
		}
	}
}

// TestCoresAtTheRateReached: the server cores of a case at a rate are
// those of the rate its generator reached: where it fell behind (redis at
// 200,000/s offered on a 2-CPU machine reached 13,785/s), at the rates
// reached, never the offered one's; a figure above the machine's logical
// CPUs is said to be so.
func TestCoresAtTheRateReached(t *testing.T) {
	ns := 24_320.0
	side := func(reached float64) results.Side {
		g := &results.Generator{OfferedRate: 200_000, AchievedRate: reached, FellBehind: reached < 0.99*200_000}
		return results.Side{CPU: &results.CPU{ServerNsPerOp: &ns}, Generator: g}
	}
	s := results.Summary{Case: results.Case{Target: "redis", Rate: 200_000},
		Sides: []results.PathSide{{Path: drivers.TCP, Side: side(13_785)}, {Path: drivers.Unix, Side: side(14_100)}}}
	line := coresLine(&s, drivers.TCP, 2)
	if want := "redis at 200,000/s offered, which the generator fell behind (the cores at the rates it reached): 0.335 server cores over TCP at 13,785/s, 0.343 over the Unix socket at 14,100/s"; !strings.HasPrefix(line, want) {
		t.Errorf("got %q,\nwant %q", line, want)
	}
	if strings.Contains(line, "4.864") || strings.Contains(line, "logical CPUs") {
		t.Errorf("the cores of the rate offered, or a word on the CPUs where none is due: %q", line)
	}
	s.Sides = []results.PathSide{{Path: drivers.TCP, Side: side(199_000)}, {Path: drivers.Unix, Side: side(200_000)}}
	line = coresLine(&s, drivers.TCP, 2)
	if want := "redis at 200,000/s: 4.840 server cores over TCP (more than the 2 logical CPUs dbsock saw on this machine), 4.864 over the Unix socket (more than the 2 logical CPUs dbsock saw on this machine)"; !strings.HasPrefix(line, want) {
		t.Errorf("got %q,\nwant %q", line, want)
	}
}

// TestLoadHeadlineSaysWhatIsMissing: at a rate as at rest, a stack a
// target was not measured from has its row under the target's, with why,
// and a target measured from no stack has its rows too.
func TestLoadHeadlineSaysWhatIsMissing(t *testing.T) {
	r := loadReport(t, false)
	r.Targets = []results.Target{
		{Name: "redis", Skipped: []results.SkippedClient{{Stack: "java", Reason: "no Java <Redis> client"}}},
		{Name: "memcached", Skipped: []results.SkippedClient{{Stack: "node", Reason: "no Node.js memcached client"}}},
	}
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(b.String(), "## Details", 2)[0]
	for _, want := range []string{
		"| redis from java | unknown | – | – | – | – | – | – | – | – | skipped: no Java &lt;Redis&gt; client |",
		"| memcached from node | unknown | – | – | – | – | – | – | – | – | skipped: no Node.js memcached client |",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("headline lacks %q:\n%s", want, head)
		}
	}
}
