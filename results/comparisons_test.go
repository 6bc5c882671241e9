package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestEveryPathAgainstTheBaseline: with three paths each case has three
// sides and a comparison of each path but the baseline; naming tcp6 the
// baseline compares TCP and Unix with it instead, by the same paired
// ratios read the other way up (the interval's bounds are the reciprocals
// of tcp6's against TCP), with the verdicts and Holm's adjustment over
// both comparisons.
func TestEveryPathAgainstTheBaseline(t *testing.T) {
	rs := []float64{1.4, 1.5, 1.6, 1.45, 1.55, 1.5, 1.52, 1.48, 1.51, 1.49, 1.5, 1.47}
	reports := map[drivers.Transport]*Report{}
	for _, base := range []drivers.Transport{"", drivers.TCP6} {
		r := &Report{Config: Config{Routes: Routes{Baseline: base}}, Runs: blockRuns(t, "redis", 1, ratios(rs...)...)}
		third := run(t, "redis", drivers.TCP6, 1, 1000)
		for j, b := range r.Runs[0].Blocks {
			v := int64(math.Round(float64(b.P50) / 1.1)) // tcp6 10% faster than TCP
			third.Blocks = append(third.Blocks, Block{Pair: j, Index: 3*j + 2, N: 100, P50: v, Mean: float64(v), P99: 2 * v})
		}
		r.Runs = append(r.Runs, third)
		if err := r.Summarize(); err != nil {
			t.Fatal(err)
		}
		reports[base] = r
	}
	def, other := reports[""].Summary[0], reports[drivers.TCP6].Summary[0]
	for _, s := range []Summary{def, other} {
		if len(s.Sides) != 3 || s.Sides[0].Path != drivers.TCP || s.Sides[1].Path != drivers.Unix || s.Sides[2].Path != drivers.TCP6 {
			t.Fatalf("sides %+v, want tcp, unix, tcp6", s.Sides)
		}
		if len(s.Comparisons) != 2 {
			t.Fatalf("%d comparisons, want 2", len(s.Comparisons))
		}
		if u := s.ComparisonOf(drivers.Unix); u == nil || u.SpeedupP50CI == nil || u.VerdictKind == "" {
			t.Errorf("Unix's comparison %+v: want a speedup with an interval and a verdict", u)
		}
		ps := []float64{s.Comparisons[0].PValue, s.Comparisons[1].PValue}
		for i, p := range Holm(ps) {
			if s.Comparisons[i].PValueHolm != p {
				t.Errorf("comparison %s: Holm-adjusted p %v, want %v (Holm over both)", s.Comparisons[i].Path, s.Comparisons[i].PValueHolm, p)
			}
		}
	}
	tcp6, tcp := def.ComparisonOf(drivers.TCP6), other.ComparisonOf(drivers.TCP)
	if tcp6 == nil || tcp == nil || tcp6.Baseline != drivers.TCP || tcp.Baseline != drivers.TCP6 || def.ComparisonOf(drivers.TCP) != nil || other.ComparisonOf(drivers.TCP6) != nil {
		t.Fatalf("comparisons %+v and %+v", def.Comparisons, other.Comparisons)
	}
	if tcp6.SpeedupP50CI == nil || tcp.SpeedupP50CI == nil ||
		math.Abs(tcp.SpeedupP50CI.Lo-1/tcp6.SpeedupP50CI.Hi) > 1e-9 || math.Abs(tcp.SpeedupP50CI.Hi-1/tcp6.SpeedupP50CI.Lo) > 1e-9 {
		t.Errorf("TCP against tcp6 %+v is not tcp6 against TCP %+v read the other way up", tcp.SpeedupP50CI, tcp6.SpeedupP50CI)
	}
	if tcp6.VerdictKind != PathFaster || tcp.VerdictKind != BaselineFaster || other.ComparisonOf(drivers.Unix).VerdictKind != UnixFaster {
		t.Errorf("verdicts: tcp6 over TCP %q, TCP over tcp6 %q, Unix over tcp6 %q", tcp6.VerdictKind, tcp.VerdictKind, other.ComparisonOf(drivers.Unix).VerdictKind)
	}
	if u := other.ComparisonOf(drivers.Unix); u.SpeedupP50 >= def.Against(drivers.Unix).SpeedupP50 || u.UnixGainP50 != 0 {
		t.Errorf("Unix over tcp6 (%.3f) should gain less than over TCP (%.3f), with no gain over itself (%v)", u.SpeedupP50, def.Against(drivers.Unix).SpeedupP50, u.UnixGainP50)
	}
}

// TestSchemaV1Reads: a version 1 case (TCP, Unix and the Unix speedups as
// fields, a further path in "paths", a verdict without its kind) reads as
// sides and comparisons against TCP, its kind judged again from its
// interval; an interval the wrong way round is refused as in version 2.
func TestSchemaV1Reads(t *testing.T) {
	v1 := `{"schema_version": 1, "targets": [{"target": "redis"}], "summary": [{"target": "redis", "scenario": "pk",
		"tcp": {"n": 10, "latency_ns": {"p50": 20}}, "unix": {"n": 10, "latency_ns": {"p50": 10}},
		"unix_speedup_p50": 2, "unix_speedup_p50_ci": {"center": 2, "lo": 1.8, "hi": 2.2}, "p_value": 0.001, "p_value_holm": 0.002,
		"verdict": "Unix faster", "cpu_saving": {"client_ns_per_op": 5},
		"paths": [{"path": "tls", "baseline": "tcp", "n": 10, "latency_ns": {"p50": 25}, "speedup_p50": 0.8, "verdict_kind": "tcp_faster", "unix_gain_p50": 2.5}]}]}`
	r, err := ReadJSON(strings.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary[0]
	if r.SchemaVersion != SchemaVersion || len(s.Sides) != 3 || len(s.Comparisons) != 2 {
		t.Fatalf("schema %d, sides %+v, comparisons %+v", r.SchemaVersion, s.Sides, s.Comparisons)
	}
	u, tls := s.ComparisonOf(drivers.Unix), s.ComparisonOf(drivers.TLS)
	if u.Baseline != drivers.TCP || u.SpeedupP50 != 2 || u.SpeedupP50CI.Lo != 1.8 || u.VerdictKind != UnixFaster || u.CPUSaving == nil || u.PValueHolm != 0.002 {
		t.Errorf("unix: %+v", u)
	}
	if tls.Baseline != drivers.TCP || tls.SpeedupP50 != 0.8 || tls.VerdictKind != TCPFaster || tls.UnixGainP50 != 2.5 {
		t.Errorf("tls: %+v", tls)
	}
	if side, ok := s.SideOf(drivers.TLS); !ok || side.Latency.P50 != 25 || s.Side(drivers.TCP).Latency.P50 != 20 || s.Against(drivers.Unix).SpeedupP50 != 2 {
		t.Errorf("sides and views: %+v, %+v, %v", side, s.Side(drivers.TCP), s.Against(drivers.Unix).SpeedupP50)
	}
	out, err := json.Marshal(r)
	if err != nil || strings.Contains(string(out), "unix_speedup") || !strings.Contains(string(out), `"comparisons"`) {
		t.Errorf("written back: %v %s", err, out)
	}
	bad := strings.Replace(v1, `"lo": 1.8, "hi": 2.2`, `"lo": 2.2, "hi": 1.8`, 1)
	if _, err := ReadJSON(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "is not an interval") {
		t.Errorf("a reversed interval in a version 1 file: %v", err)
	}
	if _, err := ReadJSON(strings.NewReader(`{"schema_version": 3, "targets": [{"target": "redis"}]}`)); err == nil || !strings.Contains(err.Error(), "this dbsock reads 1 and 2") {
		t.Errorf("version 3: %v", err)
	}
}

// TestTheTableNamesTheBaselineAndTheSocket: the path the others are
// compared with by default is drivers.PathTable's first, 127.0.0.1 TCP,
// and the socket is the one path whose clients dial "unix" straight to
// the server (the others through a hop's leg of their own).
func TestTheTableNamesTheBaselineAndTheSocket(t *testing.T) {
	unix := 0
	for _, p := range drivers.PathTable {
		if p.Network == "unix" && p.Hop == "" {
			unix++
		}
	}
	if DefaultBaseline() != drivers.TCP || Socket() != drivers.Unix || unix != 1 {
		t.Errorf("default baseline %q, socket %q, %d paths dial unix without a hop; want tcp, unix and one", DefaultBaseline(), Socket(), unix)
	}
}

// TestAccessorsReadTheData: a case's baseline is its comparisons', the
// first side's without them; a path it did not measure, or its baseline,
// has the zero side and comparison.
func TestAccessorsReadTheData(t *testing.T) {
	s := Summary{Sides: []PathSide{{Path: drivers.TCP, Side: Side{N: 1}}, {Path: drivers.Unix, Side: Side{N: 2}}},
		Comparisons: []Comparison{{Path: drivers.TCP, Baseline: drivers.Unix, SpeedupP50: 0.5}}}
	if s.Baseline() != drivers.Unix || s.Side(drivers.Unix).N != 2 || s.Against(drivers.TCP).SpeedupP50 != 0.5 {
		t.Errorf("baseline %q, unix side %+v, tcp against it %+v", s.Baseline(), s.Side(drivers.Unix), s.Against(drivers.TCP))
	}
	if s.Side(drivers.TLS).N != 0 || s.Against(drivers.Unix).Path != "" || s.ComparisonOf(drivers.Unix) != nil {
		t.Errorf("the baseline or an unmeasured path has a result: %+v, %+v", s.Side(drivers.TLS), s.Against(drivers.Unix))
	}
	s.Comparisons = nil
	if s.Baseline() != drivers.TCP {
		t.Errorf("without comparisons, baseline %q; want the first side's", s.Baseline())
	}
}
