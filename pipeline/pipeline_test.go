package pipeline

import (
	"cmp"
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// fakeProvider supplies servers that exist only in memory, and counts how
// many it supplied and stopped.
type fakeProvider struct {
	fail              map[string]error
	supplied, stopped atomic.Int32
}

func (*fakeProvider) Name() string { return "fake" }
func (*fakeProvider) Close() error { return nil }
func (p *fakeProvider) Supply(_ context.Context, t supply.Target) (*supply.Server, error) {
	if err := p.fail[t.Name]; err != nil {
		return nil, err
	}
	p.supplied.Add(1)
	srv := &supply.Server{Target: t.Name, Provenance: drivers.Provenance{Provider: "fake", Origin: "memory"}}
	srv.Set(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"}, drivers.Endpoint{Transport: drivers.Unix, Address: "/fake/" + t.Name + ".sock"})
	supply.SetStop(srv, func(context.Context) error { p.stopped.Add(1); return nil })
	return srv, nil
}

// fakeDriver's ops take unixCost over Unix and tcpCost over TCP, spinning
// (no sleep, so the figures are exact enough to compare).
type fakeDriver struct {
	name              string
	tcpCost, unixCost time.Duration
	seedErr           error
	opErr             error
	onOp              func()
	onSeed            func()
	version           string // the server's version, "1" when empty
}

func (d *fakeDriver) Name() string         { return d.name }
func (d *fakeDriver) Describe() string     { return "a fake op" }
func (d *fakeDriver) Mode() string         { return "" }
func (d *fakeDriver) ValueSize() int       { return 4 }
func (d *fakeDriver) ConnectPhase() string { return "nothing" }
func (d *fakeDriver) Seed(context.Context, drivers.Endpoint) error {
	if d.onSeed != nil {
		d.onSeed()
	}
	return d.seedErr
}
func (d *fakeDriver) Info(context.Context, drivers.Endpoint) (drivers.ServerInfo, error) {
	return drivers.ServerInfo{Product: "Fake", Version: cmp.Or(d.version, "1")}, nil
}
func (d *fakeDriver) Open(_ context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	cost := d.tcpCost
	if ep.Transport == drivers.Unix {
		cost = d.unixCost
	}
	return &fakeConn{d: d, t: ep.Transport, cost: cost}, nil
}

type fakeConn struct {
	d    *fakeDriver
	t    drivers.Transport
	cost time.Duration
}

func (c *fakeConn) Do(context.Context) error {
	if c.d.onOp != nil {
		c.d.onOp()
	}
	for end := time.Now().Add(c.cost); time.Now().Before(end); {
	}
	return c.d.opErr
}
func (c *fakeConn) Verify(context.Context) (drivers.Verification, error) {
	return drivers.Verification{Transport: c.t, Evidence: "fake"}, nil
}
func (c *fakeConn) Close() error { return nil }

func plan(p *fakeProvider, ds ...*fakeDriver) Plan {
	pl := Plan{Provider: p, ProviderName: "fake",
		Loop: scenarios.Settings{N: 300, Warmup: 10, Rounds: 2}}
	for _, d := range ds {
		d := d
		pl.Targets = append(pl.Targets, &targets.Target{Target: supply.Target{Name: d.name}, Settings: targets.Own(func(int) drivers.Driver { return d })})
	}
	return pl
}

func TestRunMeasuresEveryTargetAndRenders(t *testing.T) {
	p := &fakeProvider{}
	pl := plan(p, &fakeDriver{name: "a", tcpCost: 40 * time.Microsecond, unixCost: 20 * time.Microsecond},
		&fakeDriver{name: "b", tcpCost: 20 * time.Microsecond, unixCost: 20 * time.Microsecond})
	var rendered *results.Report
	pl.Output.Render = func(r *results.Report) error { rendered = r; return nil }
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	if rendered != rep {
		t.Fatal("Render did not receive the report Run returned")
	}
	if len(rep.Targets) != 2 || len(rep.Summary) != 2 || len(rep.Runs) != 8 {
		t.Fatalf("targets %d, summaries %d, runs %d; want 2, 2, 8", len(rep.Targets), len(rep.Summary), len(rep.Runs))
	}
	if got := p.stopped.Load(); got != 2 {
		t.Errorf("%d servers stopped, want 2", got)
	}
	a := rep.Summary[0]
	if a.Target != "a" || a.Side(drivers.TCP).N != 600 || a.Side(drivers.Unix).N != 600 {
		t.Fatalf("summary a = %+v", a)
	}
	if a.Against(drivers.Unix).SpeedupP50 < 1.5 {
		t.Errorf("a: Unix ops cost half of TCP's, speedup %.2f", a.Against(drivers.Unix).SpeedupP50)
	}
	if rep.Targets[0].Server.Product != "Fake" || rep.Targets[0].Origin != "memory" {
		t.Errorf("target record = %+v", rep.Targets[0])
	}
}

func TestRunGoesOnAfterOneTargetFails(t *testing.T) {
	p := &fakeProvider{fail: map[string]error{"a": errors.New("no server here")}}
	pl := plan(p, &fakeDriver{name: "a"}, &fakeDriver{name: "b", seedErr: errors.New("seed refused")}, &fakeDriver{name: "c"})
	rep, err := Run(context.Background(), pl)
	if err == nil || !strings.Contains(err.Error(), "a: no server here") || !strings.Contains(err.Error(), "b: seed refused") {
		t.Fatalf("err = %v, want both failures named", err)
	}
	if rep.Targets[0].Error == "" || rep.Targets[1].Error == "" || rep.Targets[2].Error != "" {
		t.Fatalf("target errors = %q, %q, %q", rep.Targets[0].Error, rep.Targets[1].Error, rep.Targets[2].Error)
	}
	if len(rep.Summary) != 1 || rep.Summary[0].Target != "c" {
		t.Fatalf("summaries = %+v, want c only", rep.Summary)
	}
	if got := p.stopped.Load(); got != 2 {
		t.Errorf("%d servers stopped, want 2 (b after its seed failed, and c)", got)
	}
	pl.FailFast = true
	rep, _ = Run(context.Background(), pl)
	if !strings.Contains(rep.Targets[2].Error, "(Plan.FailFast)") {
		t.Errorf("with FailFast the third target says %q", rep.Targets[2].Error)
	}
}

func TestRunInterruptedKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ops atomic.Int64
	d := &fakeDriver{name: "a", onOp: func() {
		if ops.Add(1) == 2000 {
			cancel()
		}
	}}
	p := &fakeProvider{}
	pl := plan(p, d, &fakeDriver{name: "b"})
	pl.Loop.N, pl.Loop.Rounds = 1000, 3
	rendered := false
	pl.Output.Render = func(*results.Report) error { rendered = true; return nil }
	rep, err := Run(ctx, pl)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !rendered {
		t.Error("an interrupted run must still render its partial report")
	}
	if len(rep.Runs) == 0 || !rep.Runs[len(rep.Runs)-1].Incomplete {
		t.Fatalf("want the measured runs and the interrupted one marked incomplete, got %d runs", len(rep.Runs))
	}
	if !strings.Contains(rep.Targets[1].Error, "interrupted") {
		t.Errorf("second target: %q, want not run: interrupted", rep.Targets[1].Error)
	}
	if p.stopped.Load() != p.supplied.Load() {
		t.Errorf("supplied %d servers, stopped %d", p.supplied.Load(), p.stopped.Load())
	}
}

func TestRunChecksThresholds(t *testing.T) {
	pl := plan(&fakeProvider{}, &fakeDriver{name: "a", tcpCost: 30 * time.Microsecond, unixCost: 10 * time.Microsecond})
	for _, expr := range []string{"a.unix_speedup_p50>=1.5", "a.unix.p50<1us"} {
		th, err := results.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		pl.Gates.Thresholds = append(pl.Gates.Thresholds, th)
	}
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, false}
	if len(rep.Thresholds) != len(want) {
		t.Fatalf("thresholds = %+v", rep.Thresholds)
	}
	for i, th := range rep.Thresholds {
		if th.OK != want[i] {
			t.Errorf("%s: ok = %v, want %v (%s)", th.Expr, th.OK, want[i], th.ActualText)
		}
	}
	// A threshold on a target the plan does not measure is refused before
	// anything starts, naming the plan's field.
	th, _ := results.Parse("z.unix.p50<1s")
	pl.Gates.Thresholds = append(pl.Gates.Thresholds, th)
	if _, err := Run(context.Background(), pl); err == nil || !strings.Contains(err.Error(), `Plan.Gates.Thresholds "z.unix.p50<1s" names target z, which this run does not measure (it runs a)`) {
		t.Errorf("threshold on a target not measured: %v", err)
	}
}

func TestRunRenderFailureIsAnError(t *testing.T) {
	pl := plan(&fakeProvider{}, &fakeDriver{name: "a"})
	pl.Output.Render = func(*results.Report) error { return errors.New("disk full") }
	if _, err := Run(context.Background(), pl); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
}

// TestTwoPlansInOneProcessSeeTheSameMachine: with auto placement, a second
// run in the same process sees the topology the first saw, and each run
// gives the process back the affinity it found.
func TestTwoPlansInOneProcessSeeTheSameMachine(t *testing.T) {
	before, err := placement.Affinity(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var records []results.Placement
	for i := 0; i < 2; i++ {
		place, err := placement.Resolve("auto", "", "")
		if err != nil {
			t.Fatal(err)
		}
		pl := plan(&fakeProvider{}, &fakeDriver{name: "x", tcpCost: 2 * time.Microsecond, unixCost: time.Microsecond})
		pl.Placement = place
		rep, err := Run(context.Background(), pl)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, rep.Config.Placement)
		if after, _ := placement.Affinity(os.Getpid()); !reflect.DeepEqual(after, before) {
			t.Fatalf("run %d left the process on CPUs %v; it found %v", i+1, after, before)
		}
	}
	if records[0] != records[1] {
		t.Fatalf("the second run saw another machine:\n%+v\n%+v", records[0], records[1])
	}
}

// TestEveryOpFailedIsNoResult: a case whose ops all failed, too few of them
// in a row to stop the loop, publishes no latency or speedup and fails the
// run, saying how many failed and why.
func TestEveryOpFailedIsNoResult(t *testing.T) {
	d := &fakeDriver{name: "x", tcpCost: time.Microsecond, unixCost: time.Microsecond, opErr: errors.New("value too large")}
	pl := plan(&fakeProvider{}, d)
	pl.Loop.N, pl.Loop.Warmup, pl.Loop.Blocks = 5, 0, 1
	rep, err := Run(context.Background(), pl)
	if err == nil || !strings.Contains(err.Error(), "10 of 10 ops failed over TCP") || !strings.Contains(err.Error(), "value too large") {
		t.Fatalf("err = %v, want the failed ops counted and their error", err)
	}
	s := rep.Summary[0]
	if s.Against(drivers.Unix).VerdictKind != results.NoResult || s.Against(drivers.Unix).SpeedupP50 != 0 || s.Against(drivers.Unix).SpeedupP50CI != nil {
		t.Fatalf("summary %+v: want no result, no speedup", s)
	}
	pl.Gates.MaxErrorRate = -1
	if _, err := Run(context.Background(), pl); err != nil {
		t.Fatalf("with the check off: %v", err)
	}
}

// TestSeedLimitGrowsWithTheValues: seeding may take a millisecond per row
// and one per 64 KiB of values beyond the op timeout, so that large
// values are not taken for a server that stopped answering.
func TestSeedLimitGrowsWithTheValues(t *testing.T) {
	tests := []struct {
		rows, size int
		want       time.Duration
	}{
		{0, 0, 10*time.Second + time.Millisecond},
		{10000, 6, 20 * time.Second},
		{10000, 1 << 20, 20*time.Second + 160*time.Second},
		{100, 16 << 20, 10*time.Second + 100*time.Millisecond + 25600*time.Millisecond},
	}
	for _, tt := range tests {
		if got := seedLimit(10*time.Second, tt.rows, tt.size); got != tt.want {
			t.Errorf("seedLimit(10s, %d rows, %d B) = %s, want %s", tt.rows, tt.size, got, tt.want)
		}
	}
}

// TestServerWordsEscapedInTheLog: what a server says of itself (its
// version) reaches the log as one line of visible text: no terminal
// escape sequence, no line of its own that would read as dbsock's.
func TestServerWordsEscapedInTheLog(t *testing.T) {
	pl := plan(&fakeProvider{}, &fakeDriver{name: "a", version: "1 \x1b[2J\ndbsock: all done"})
	var log strings.Builder
	pl.Output.Log = &log
	if _, err := Run(context.Background(), pl); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(log.String(), 0x1b) || strings.Contains(log.String(), "\ndbsock: all done") || !strings.Contains(log.String(), `Fake 1 \x1b[2J; dbsock: all done from memory`) {
		t.Errorf("the server's words in the log:\n%s", log.String())
	}
}
