package results

import (
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// TestGenerator: an open loop's achieved rate is its slowest block's ops
// over its wall time; it fell behind when that is under 99% of the
// offered rate or a block's p99 lag is over the bound; pooling keeps the
// worst of each.
func TestGenerator(t *testing.T) {
	kept := []Block{{N: 3000, ElapsedNs: int64(time.Second), LagP99Ns: 80_000}, {N: 2980, ElapsedNs: int64(time.Second), LagP99Ns: 90_000}}
	g := NewGenerator(3000, kept, Latency{P50: 20_000})
	if g.AchievedRate != 2990 || g.LowestRate != 2980 || g.LagP99Ns != 90_000 || g.LagP50Ns != 20_000 || g.FellBehind || g.Blocks != 2 || g.BlocksBehind != 0 {
		t.Errorf("kept: %+v", g)
	}
	if g := NewGenerator(3000, []Block{{N: 2960, ElapsedNs: int64(time.Second)}}, Latency{}); !g.FellBehind || g.AchievedRate != 2960 || g.BlocksBehind != 1 {
		t.Errorf("98.7%% of the rate: %+v, want fell behind", g)
	}
	if g := NewGenerator(3000, []Block{{N: 3000, ElapsedNs: int64(time.Second), LagP99Ns: int64(LagBound) + 1}}, Latency{}); !g.FellBehind {
		t.Errorf("lag over the bound in a file without lateness: %+v, want fell behind", g)
	}
	queued := []Block{{N: 3000, ElapsedNs: int64(time.Second), LagP99Ns: 5 * int64(LagBound), LateP99Ns: 40_000}}
	if g := NewGenerator(3000, queued, Latency{}); g.FellBehind || g.LateP99Ns != 40_000 {
		t.Errorf("lag from queueing behind a slow server, the generator on time: %+v, want kept", g)
	}
	late := []Block{{N: 3000, ElapsedNs: int64(time.Second), LagP99Ns: 5 * int64(LagBound), LateP99Ns: 2 * int64(LagBound)}}
	if g := NewGenerator(3000, late, Latency{}); !g.FellBehind {
		t.Errorf("the generator itself late: %+v, want fell behind", g)
	}
	if NewGenerator(0, kept, Latency{}) != nil {
		t.Error("a closed loop has no generator figures")
	}
	behind := NewGenerator(3000, []Block{{N: 1000, ElapsedNs: int64(time.Second)}}, Latency{P50: 5e6})
	p := g.Pool(behind)
	if !p.FellBehind || p.LowestRate != 1000 || p.Blocks != 3 || p.BlocksBehind != 1 || p.LagP50Ns != 5e6 || p.LagP99Ns != 90_000 || g.FellBehind {
		t.Errorf("pooled %+v (g %+v)", p, g)
	}
	if (*Generator)(nil).Pool(nil) != nil || (*Generator)(nil).Pool(g).AchievedRate != g.AchievedRate {
		t.Error("pooling with nil")
	}
	// One block of 21 behind (under one in twenty): the side kept its
	// schedule; two of 21: it fell behind.
	var blocks []Block
	for i := 0; i < 21; i++ {
		blocks = append(blocks, Block{N: 3000, ElapsedNs: int64(time.Second), LateP99Ns: 50_000})
	}
	blocks[3].LateP99Ns = 2 * int64(LagBound)
	if g := NewGenerator(3000, blocks, Latency{}); g.FellBehind || g.BlocksBehind != 1 {
		t.Errorf("1 of 21 blocks behind: %+v, want kept", g)
	}
	blocks[9].N = 2000
	if g := NewGenerator(3000, blocks, Latency{}); !g.FellBehind || g.BlocksBehind != 2 {
		t.Errorf("2 of 21 blocks behind: %+v, want fell behind", g)
	}
}

// TestFellBehindNamesNoWinner: a comparison whose sides' generator fell
// behind gets that verdict, whatever its interval says; one that kept its
// schedule keeps its verdict.
func TestFellBehindNamesNoWinner(t *testing.T) {
	ci := &Interval{Center: 1.4, Lo: 1.3, Hi: 1.5, Pairs: 10}
	kept := Side{N: 100, Generator: &Generator{OfferedRate: 3000, AchievedRate: 3000}}
	behind := Side{N: 100, Generator: &Generator{OfferedRate: 3000, AchievedRate: 1000, FellBehind: true}}
	for _, tc := range []struct {
		base, path Side
		want       VerdictKind
	}{
		{kept, kept, UnixFaster},
		{behind, kept, FellBehind},
		{kept, behind, FellBehind},
	} {
		c := Comparison{Path: drivers.Unix, Baseline: drivers.TCP, SpeedupP50CI: ci, PValueHolm: 0.001}
		c.judge(tc.base, tc.path)
		if c.VerdictKind != tc.want || c.VerdictKind.Winner() != (tc.want == UnixFaster) {
			t.Errorf("base %v, path %v: %s, want %s", tc.base.Generator.FellBehind, tc.path.Generator.FellBehind, c.VerdictKind, tc.want)
		}
	}
}

// TestGeneratorLagMean: the mean lag pools weighted by ops, as an average
// over all ops (pgbench's figure) is.
func TestGeneratorLagMean(t *testing.T) {
	a := NewGenerator(1000, []Block{{N: 300, ElapsedNs: 3e8}}, Latency{Mean: 100})
	b := NewGenerator(1000, []Block{{N: 100, ElapsedNs: 1e8}}, Latency{Mean: 500})
	if p := a.Pool(b); p.Ops != 400 || p.LagMeanNs != 200 {
		t.Errorf("pooled %+v, want 400 ops and a mean lag of (300*100 + 100*500) / 400 = 200 ns", p)
	}
}
