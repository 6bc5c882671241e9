package pipeline

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// restartingProvider is fakeProvider whose servers can be restarted, and
// counts the restarts and the seeds after them.
type restartingProvider struct {
	fakeProvider
	restarts atomic.Int32
}

func (p *restartingProvider) Supply(ctx context.Context, t supply.Target) (*supply.Server, error) {
	srv, err := p.fakeProvider.Supply(ctx, t)
	if err == nil {
		supply.SetRestart(srv, func(context.Context) error { p.restarts.Add(1); return nil })
	}
	return srv, err
}

func TestInstancesRestartTheServerAndGiveTheInterval(t *testing.T) {
	p := &restartingProvider{}
	var seeds atomic.Int32
	d := &fakeDriver{name: "a", tcpCost: 40 * time.Microsecond, unixCost: 20 * time.Microsecond}
	pl := plan(&p.fakeProvider, d)
	pl.Provider = p
	pl.Loop.Rounds, pl.Loop.Blocks, pl.Loop.N, pl.Instances = 1, 4, 100, 6
	d.onSeed = func() { seeds.Add(1) }
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.restarts.Load(); got != 5 {
		t.Errorf("%d restarts for 6 instances, want 5", got)
	}
	if got := seeds.Load(); got != 1 {
		t.Errorf("seeded %d times, want 1: the fake keeps its data over a restart", got)
	}
	seen := map[int]int{}
	for _, run := range rep.Runs {
		seen[run.Instance]++
	}
	for i := 1; i <= 6; i++ {
		if seen[i] != 2 {
			t.Errorf("runs by instance %v, want 2 (TCP and Unix) in each of instances 1 to 6", seen)
			break
		}
	}
	s := rep.Summary[0]
	ci := s.Against(drivers.Unix).SpeedupP50CI
	if ci == nil || ci.Instances != 6 || ci.Method != results.MethodInstances || len(s.Against(drivers.Unix).InstanceSpeedups) != 6 {
		t.Fatalf("interval %+v, instance speedups %v: want one over 6 instances", ci, s.Against(drivers.Unix).InstanceSpeedups)
	}
	if ci.Lo > s.Against(drivers.Unix).SpeedupP50 || ci.Hi < s.Against(drivers.Unix).SpeedupP50 || s.Against(drivers.Unix).SpeedupP50 < 1.3 {
		t.Errorf("speedup %.3f in [%.3f, %.3f]: want about 2 inside its interval", s.Against(drivers.Unix).SpeedupP50, ci.Lo, ci.Hi)
	}
	if rep.Config.Instances != 6 {
		t.Errorf("config says %d instances, want 6", rep.Config.Instances)
	}
}

// A server that keeps nothing over a restart is seeded again; with fewer
// instances than an interval needs, the verdict says so.
func TestInstancesSeedAVolatileServerAgain(t *testing.T) {
	p := &restartingProvider{}
	var seeds atomic.Int32
	d := &fakeDriver{name: "a", tcpCost: 40 * time.Microsecond, unixCost: 20 * time.Microsecond, onSeed: func() { seeds.Add(1) }}
	pl := plan(&p.fakeProvider, d)
	pl.Provider = p
	pl.Targets[0].Volatile = true
	pl.Loop.Rounds, pl.Loop.Blocks, pl.Loop.N, pl.Instances = 1, 4, 100, 3
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	if got := seeds.Load(); got != 3 {
		t.Errorf("seeded %d times, want 3: once per instance", got)
	}
	if s := rep.Summary[0]; s.Against(drivers.Unix).VerdictKind != results.TooFewInstances || s.Against(drivers.Unix).SpeedupP50CI != nil || len(s.Against(drivers.Unix).InstanceSpeedups) != 3 {
		t.Errorf("3 instances: verdict %s, interval %+v, speedups %v; want too few instances, no interval, 3 speedups", s.Against(drivers.Unix).VerdictKind, s.Against(drivers.Unix).SpeedupP50CI, s.Against(drivers.Unix).InstanceSpeedups)
	}
}

// A server dbsock cannot restart gets its instances as fresh connections
// to the one process, and the target says so; asked for explicitly, it
// fails.
func TestInstancesOfAServerNotOurs(t *testing.T) {
	p := &fakeProvider{}
	pl := plan(p, &fakeDriver{name: "a", tcpCost: 40 * time.Microsecond, unixCost: 20 * time.Microsecond})
	pl.Loop.Rounds, pl.Loop.Blocks, pl.Loop.N, pl.Instances = 1, 4, 100, 6
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	if last := rep.Runs[len(rep.Runs)-1]; len(rep.Runs) != 12 || last.Instance != 6 || last.Round != 1 {
		t.Errorf("%d runs, the last round %d of instance %d: want 6 instances of 1 round", len(rep.Runs), last.Round, last.Instance)
	}
	if w := strings.Join(results.Texts(rep.Targets[0].Warnings), " "); !strings.Contains(w, "could not restart it") || !strings.Contains(w, "6 instances are 6 sets of fresh connections") {
		t.Errorf("target warnings %q do not say the interval covers one server process", w)
	}
	if ci := rep.Summary[0].Against(drivers.Unix).SpeedupP50CI; ci == nil || ci.Instances != 6 {
		t.Errorf("interval %+v: want one over the 6 sets of connections", ci)
	}
	// Given explicitly, the same: fresh connections, said so.
	pl.InstancesAsked = true
	rep, err = Run(context.Background(), pl)
	if err != nil || len(rep.Runs) != 12 || !strings.Contains(strings.Join(results.Texts(rep.Targets[0].Warnings), " "), "6 instances are 6 sets of fresh connections") {
		t.Errorf("explicit Instances on a server dbsock cannot restart: %v, %d runs, warnings %q", err, len(rep.Runs), rep.Targets[0].Warnings)
	}
}

// TestHolmWarningBeforeTheRun: a run whose comparisons outnumber what a
// sign test over its instances can carry through Holm's adjustment is
// told so before anything starts (3 targets on 6 paths: 15 comparisons,
// 10 instances needed); 4 paths (9 comparisons) over 9 instances are not.
// The warning names the setting to raise, Instances, and the log words it
// for its reader (Output.Name).
func TestHolmWarningBeforeTheRun(t *testing.T) {
	three := []*targets.Target{{Target: supply.Target{Name: "a"}}, {Target: supply.Target{Name: "b"}}, {Target: supply.Target{Name: "c"}}}
	six := []drivers.Transport{drivers.TCP, drivers.Published, drivers.Bridge, drivers.Service, drivers.Pod, drivers.Unix}
	p := Plan{Targets: three, Paths: six, Instances: 9}
	w := p.holmWarning()
	if !strings.Contains(w.String(), "15 comparisons (3 targets and client stacks measured × 1 cases × 5 paths against TCP) over 9 server instances") || !strings.Contains(w.String(), "set Plan.Instances to 10 or more") {
		t.Errorf("six paths: %q", w)
	}
	if fs := w.Fields(); len(fs) != 1 || fs[0] != setting.Instances {
		t.Errorf("six paths: the warning names %v, want %v", fs, setting.Instances)
	}
	for _, ok := range []Plan{{Targets: three, Paths: six, Instances: 10}, {Targets: three, Paths: six[2:], Instances: 9}, {Targets: three, Paths: six, Instances: 1}} {
		if w := ok.holmWarning(); !w.IsZero() {
			t.Errorf("%d paths over %d instances: warned %q", len(ok.Paths), ok.Instances, w)
		}
	}

	// Run logs it before anything starts, worded by Output.Name (here an
	// interrupted run, so that nothing does).
	pl := plan(&fakeProvider{}, &fakeDriver{name: "a"})
	pl.Paths, pl.Sweep.Concurrency, pl.Instances, pl.InstancesAsked = []drivers.Transport{drivers.TCP, drivers.TCP2, drivers.Unix}, []int{1, 2}, 7, true
	var log strings.Builder
	pl.Output.Log, pl.Output.Name = &log, func(f setting.Field) string { return map[setting.Field]string{setting.Instances: "--instances"}[f] }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Run(ctx, pl)
	if !strings.Contains(log.String(), "dbsock: 4 comparisons (1 targets and client stacks measured × 2 cases × 2 paths against TCP) over 7 server instances") ||
		!strings.Contains(log.String(), "set --instances to 8 or more for verdicts") {
		t.Errorf("the log of a run of 4 comparisons over 7 instances:\n%s", log.String())
	}
}

// TestInstancesOfAServerYouRun: --instances given or left at its default,
// a server dbsock cannot restart gets fresh connections per instance, and
// the target says the interval covers its one process; the plan is valid
// either way.
func TestInstancesOfAServerYouRun(t *testing.T) {
	for _, asked := range []bool{false, true} {
		p := Plan{Instances: 9, InstancesAsked: asked, ProviderName: "external"}
		if err := p.validateInstances(); err != nil {
			t.Errorf("asked %v: %v", asked, err)
		}
		ti := &results.Target{}
		srv := &supply.Server{Target: "redis", Provenance: drivers.Provenance{Provider: "external"}}
		if p.canRestart(srv, ti) {
			t.Errorf("asked %v: a server dbsock did not start would be restarted", asked)
		}
		if len(ti.Warnings) != 1 || !strings.Contains(ti.Warnings[0].String(), "its 9 instances are 9 sets of fresh connections") {
			t.Errorf("asked %v: warnings %q", asked, ti.Warnings)
		}
	}
}

// TestInstancesRaisedForHolm: instances not asked for are raised to what
// the run's comparisons need for Holm's adjustment to let a sign test over
// them name a winner (3 targets on 6 paths: 15 comparisons, 10 instances;
// on 10 targets: 50 comparisons, 11); asked for, they are measured as
// given (and warned of); under Precision, 1.
func TestInstancesRaisedForHolm(t *testing.T) {
	var ten []*targets.Target
	for _, n := range "abcdefghij" {
		ten = append(ten, &targets.Target{Target: supply.Target{Name: string(n)}})
	}
	six := []drivers.Transport{drivers.TCP, drivers.Published, drivers.Bridge, drivers.Service, drivers.Pod, drivers.Unix}
	for _, c := range []struct {
		p    Plan
		want int
	}{
		{Plan{Targets: ten[:3], Paths: six, Instances: 9}, 10},
		{Plan{Targets: ten, Paths: six, Instances: 9}, 11},
		{Plan{Targets: ten[:3], Paths: six[4:], Instances: 9}, 9},
		{Plan{Targets: ten[:3], Paths: six[4:], Instances: 9, Placements: make([]placement.Placement, 2)}, 9},
		{Plan{Targets: ten[:3], Paths: six, Instances: 9, Placements: make([]placement.Placement, 2)}, 11},
		{Plan{Targets: ten[:3], Paths: six, Instances: 12}, 12},
		{Plan{Targets: ten[:3], Paths: six, Instances: 9, InstancesAsked: true}, 9},
		{Plan{Targets: ten[:3], Paths: six, Instances: 1}, 1},
		{Plan{Targets: ten[:3], Paths: six, Instances: 9, Loop: scenarios.Settings{Precision: 0.03}}, 1},
	} {
		if got := c.p.InstancesPerCase(); got != c.want {
			t.Errorf("%d targets on %d paths, Instances %d (asked %v, precision %v): %d instances per case, want %d",
				len(c.p.Targets), len(c.p.Paths), c.p.Instances, c.p.InstancesAsked, c.p.Loop.Precision, got, c.want)
		}
		q := c.p // as Run goes on with it
		q.Instances = c.p.InstancesPerCase()
		if w := q.holmWarning(); !w.IsZero() && !q.InstancesAsked {
			t.Errorf("instances not asked for, raised to %d: warned %q", q.Instances, w)
		}
	}
}
