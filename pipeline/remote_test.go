package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/redis"
)

// inProcess is a Remote that runs "dbsock measure FILE" in this process:
// the case goes through its file and its runs through theirs, as they do
// to and from the client container.
type inProcess struct {
	dirs    []string
	execs   int
	stopped bool
	cases   [][]byte // the case files as the client read them
}

func (r *inProcess) Exec(ctx context.Context, args ...string) error {
	r.execs++
	if len(args) != 2 || args[0] != "measure" {
		return errors.New("unexpected command")
	}
	if b, err := os.ReadFile(args[1]); err == nil {
		r.cases = append(r.cases, b)
	}
	return ServeCase(ctx, args[1])
}
func (r *inProcess) Place() string              { return "the test's own process" }
func (r *inProcess) PID() int                   { return 0 }
func (r *inProcess) Stop(context.Context) error { r.stopped = true; return nil }

// remoteSettings is the registered fake target's settings: UnixUS sets its
// Unix op's cost, which only a client that decoded the settings knows.
type remoteSettings struct {
	UnixUS   int `json:"unix_us"`
	password *string
}

func (s *remoteSettings) Validate() error {
	if s.UnixUS < 1 {
		return fmt.Errorf("unix_us %d: give 1 or more", s.UnixUS)
	}
	return nil
}
func (s *remoteSettings) External() (supply.Pair, error) { return supply.Pair{}, nil }
func (s *remoteSettings) Driver(drivers.Workload) drivers.Driver {
	return &passwordDriver{fakeDriver: fakeDriver{name: "remote-fake", tcpCost: 40 * time.Microsecond, unixCost: time.Duration(s.UnixUS) * time.Microsecond}, saw: s.password}
}

// passwordDriver records the password its connections were opened with.
type passwordDriver struct {
	fakeDriver
	saw *string
}

func (d *passwordDriver) Open(ctx context.Context, ep drivers.Endpoint) (drivers.Conn, error) {
	*d.saw = ep.Password
	return d.fakeDriver.Open(ctx, ep)
}

var remotePassword string

func init() {
	never := func(context.Context, *supply.Local, string) (*supply.Server, error) {
		return nil, errors.New("the test supplies it")
	}
	targets.Register(targets.Target{Target: supply.Target{Name: "remote-fake", Recipe: supply.Recipe{Local: never}}, Settings: func() targets.Settings {
		return &remoteSettings{UnixUS: 40, password: &remotePassword}
	}})
}

func TestRemoteClientRunsTheCaseFromItsFile(t *testing.T) {
	tgt, _ := targets.Lookup("remote-fake")
	var remote *inProcess
	var progress atomic.Int64
	pl := Plan{Provider: &fakeProvider{}, ProviderName: "fake", Targets: []*targets.Target{tgt},
		Loop: scenarios.Settings{N: 200, Warmup: 10, Rounds: 1}, Output: Output{Progress: &progress}, Instances: 2,
		Settings: map[string]targets.Settings{"remote-fake": &remoteSettings{UnixUS: 10}},
		Client: ClientSide{Place: "container", Remote: func(_ context.Context, target string, dirs []string) (Remote, error) {
			remote = &inProcess{dirs: dirs}
			return remote, nil
		}}}
	pl.Provider = passwordProvider{&fakeProvider{}}
	rep, err := Run(context.Background(), pl)
	if err != nil {
		t.Fatal(err)
	}
	if remote == nil || remote.execs != 2 || !remote.stopped {
		t.Fatalf("remote %+v: want one exec per instance (2) and a stop", remote)
	}
	if len(remote.dirs) != 2 || remote.dirs[1] != "/fake" {
		t.Errorf("dirs mounted: %v, want the case dir and the socket's dir /fake", remote.dirs)
	}
	if _, err := os.Stat(remote.dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the case dir %s is still there (%v)", remote.dirs[0], err)
	}
	if remotePassword != "s3cret" {
		t.Errorf("the client opened its connections with password %q, want the endpoint's", remotePassword)
	}
	if rep.Config.Client != "container" || rep.Targets[0].Client != "the test's own process" {
		t.Errorf("client %q, target's %q", rep.Config.Client, rep.Targets[0].Client)
	}
	if len(rep.Runs) != 4 {
		t.Fatalf("%d runs, want both transports of 2 instances", len(rep.Runs))
	}
	for _, run := range rep.Runs {
		if run.N != 200 || !run.TransportVerified || run.Instance < 1 || run.Histogram == "" {
			t.Errorf("run %s instance %d: n %d verified %v", run.Transport, run.Instance, run.N, run.TransportVerified)
		}
	}
	if got := progress.Load(); got != 800 {
		t.Errorf("progress counted %d ops, want the 4 runs' 800", got)
	}
	// The settings reached the client as data: Unix ops cost 10 us
	// there, TCP 40.
	if s := rep.Summary[0]; s.Against(drivers.Unix).SpeedupP50 < 2 {
		t.Errorf("speedup %.2f: the client did not read the settings' unix_us 10", s.Against(drivers.Unix).SpeedupP50)
	}
	if len(remote.cases) != 2 {
		t.Fatalf("%d case files read, want 2", len(remote.cases))
	}
	var cs Case
	if err := json.Unmarshal(remote.cases[0], &cs); err != nil {
		t.Fatal(err)
	}
	if got := string(cs.Settings); got != `{"unix_us":10}` {
		t.Errorf("the case's settings are %s, want the target's settings as JSON values", got)
	}
}

// passwordProvider supplies fake servers whose endpoints have a password.
type passwordProvider struct{ *fakeProvider }

func (p passwordProvider) Supply(ctx context.Context, t supply.Target) (*supply.Server, error) {
	srv, err := p.fakeProvider.Supply(ctx, t)
	if srv != nil {
		tcp, unix := srv.TCP(), srv.Unix()
		tcp.Password, unix.Password = "s3cret", "s3cret"
		srv.Set(tcp, unix)
	}
	return srv, err
}

func TestRemoteClientErrorsComeBack(t *testing.T) {
	dir := t.TempDir()
	rc := &remoteClient{r: &inProcess{}, dir: dir}
	srv := &supply.Server{}
	srv.Set(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"}, drivers.Endpoint{Transport: drivers.Unix, Address: "/fake/x.sock"})
	tgt, _ := targets.Lookup("remote-fake")
	cs, err := Plan{Loop: scenarios.Settings{N: 10, Rounds: 1}}.remoteCase(tgt, drivers.Workload{}, 1, srv.Endpoints().Paths(), drivers.ServerInfo{}, scenarios.Case{}, scenarios.Instance{Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ settings, want string }{
		{`{"no_such_setting":1}`, `unknown field "no_such_setting"`},
		{`{"unix_us":"ten"}`, "cannot unmarshal string"},
		{`{"unix_us":0}`, "unix_us 0: give 1 or more"},
	} {
		cs.Settings = json.RawMessage(c.settings)
		err = rc.measure(context.Background(), cs, func(results.Run) {})
		if err == nil || !strings.Contains(err.Error(), "remote-fake's settings") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("settings %s: err = %v, want the client's own error, saying %q", c.settings, err, c.want)
		}
	}
	// A server that did not answer keeps its identity across the process
	// boundary: the pipeline then stops it without grace.
	end := caseEnd{Error: "x: " + scenarios.ErrNoAnswer.Error(), NoAnswer: true}.said(scenarios.ErrNoAnswer)
	if !errors.Is(end, scenarios.ErrNoAnswer) || end.Error() != "x: "+scenarios.ErrNoAnswer.Error() {
		t.Errorf("the client's error %q does not unwrap to ErrNoAnswer", end)
	}
	if _, err := readRuns(dir+"/missing.out", func(results.Run) {}); err == nil {
		t.Error("reading a missing output file gave no error")
	}
	// A line longer than a run takes is refused, not read into memory
	// whole.
	long := filepath.Join(dir, "long.out")
	if err := os.WriteFile(long, bytes.Repeat([]byte("x"), maxRunLine+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readRuns(long, func(results.Run) {}); err == nil || !strings.Contains(err.Error(), "longer than a run takes") {
		t.Errorf("a %d-byte line: %v", maxRunLine+1, err)
	}
}

// hungRemote is a client that never ends and never says it is alive (a
// paused container, or a binary that only sleeps).
type hungRemote struct{ inProcess }

func (r *hungRemote) Exec(context.Context, ...string) error { select {} }

// TestSilentClientIsTimedOut: a client that stops saying it is alive ends
// the case with an error after --op-timeout + 5 s, instead of holding the
// run for ever.
func TestSilentClientIsTimedOut(t *testing.T) {
	rc := &remoteClient{r: &hungRemote{}, dir: t.TempDir()}
	srv := &supply.Server{}
	srv.Set(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"}, drivers.Endpoint{Transport: drivers.Unix, Address: "/fake/x.sock"})
	tgt, _ := targets.Lookup("remote-fake")
	loop := scenarios.Settings{N: 10, Rounds: 1, OpTimeout: 100 * time.Millisecond}
	start := time.Now()
	cs, err := Plan{Loop: loop}.remoteCase(tgt, drivers.Workload{}, 1, srv.Endpoints().Paths(), drivers.ServerInfo{}, scenarios.Case{}, scenarios.Instance{Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = rc.measure(context.Background(), cs, func(results.Run) {})
	if !errors.Is(err, errClientSilent) || !strings.Contains(err.Error(), "the test's own process") {
		t.Fatalf("err = %v, want the client's silence", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the silent client held the case %v", took)
	}
}

type sqlStateErr struct{ state string }

func (e sqlStateErr) Error() string {
	return "FATAL: the database system is starting up (SQLSTATE " + e.state + ")"
}
func (e sqlStateErr) SQLState() string { return e.state }

// TestServerAnswerIsNotSniffed: an error that is the server's own answer
// (an SQLSTATE) is not followed by a guess at what answers there.
func TestServerAnswerIsNotSniffed(t *testing.T) {
	if !serverAnswered(fmt.Errorf("connect: %w", sqlStateErr{"57P03"})) {
		t.Error("an SQLSTATE error was not taken as the server's answer")
	}
	if serverAnswered(errors.New("connection refused")) {
		t.Error("a refused connection was taken as the server's answer")
	}
}

// TestCaseCarriesSettingsAsData: a case holds its target's settings as
// JSON values, which the client decodes into the target's own type
// through the registry; no flag, and none of a server's endpoints or
// password, is in them.
func TestCaseCarriesSettingsAsData(t *testing.T) {
	tgt, _ := targets.Lookup("redis")
	s := redis.DefaultSettings()
	s.Protocol, s.Identity = 2, true
	s.Addr, s.Socket, s.Password = "127.0.0.1:6379", "/run/redis/redis.sock", "s3cret"
	srv := &supply.Server{}
	srv.Set(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"}, drivers.Endpoint{Transport: drivers.Unix, Address: "/fake/x.sock"})
	pl := Plan{Settings: map[string]targets.Settings{"redis": s}, Loop: scenarios.Settings{N: 10, Rounds: 1}}
	cs, err := pl.remoteCase(tgt, drivers.Workload{}, 1, srv.Endpoints().Paths(), drivers.ServerInfo{}, scenarios.Case{}, scenarios.Instance{Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	var read Case
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	if got, want := string(read.Settings), `{"protocol":2,"identity":true}`; got != want {
		t.Errorf("the case's settings are %s, want %s", got, want)
	}
	for _, not := range []string{"--", "redis-", "s3cret", "6379", "redis.sock"} {
		if strings.Contains(string(read.Settings), not) {
			t.Errorf("the case's settings %s hold %q", read.Settings, not)
		}
	}
	got, err := read.targetSettings()
	if err != nil {
		t.Fatal(err)
	}
	if rs, ok := got.(*redis.Settings); !ok || rs.Protocol != 2 || !rs.Identity || rs.Addr != "" || rs.Password != "" {
		t.Errorf("the client read a %T, want *redis.Settings with protocol 2 and identity, and no server", got)
	}
	read.Settings = json.RawMessage(`{"protocol":4}`)
	if _, err := read.targetSettings(); err == nil || !strings.Contains(err.Error(), "redis.Settings.Protocol 4 is not accepted") {
		t.Errorf("protocol 4: %v, want the settings' own error", err)
	}
}

// TestCaseCarriesLoopAsData: a case holds the plan's loop settings and
// the pipeline's case as JSON values with snake_case names, which the
// client reads back as they were; the meters and the progress counter
// stay on this side (the client makes its own from the server's pids).
func TestCaseCarriesLoopAsData(t *testing.T) {
	tgt, _ := targets.Lookup("redis")
	srv := &supply.Server{}
	srv.Set(drivers.Endpoint{Transport: drivers.TCP, Address: "127.0.0.1:1"}, drivers.Endpoint{Transport: drivers.Unix, Address: "/fake/x.sock"})
	loop := scenarios.Settings{N: 500, Warmup: 20, Rounds: 2, Blocks: 5, Seed: 9, OpTimeout: 3 * time.Second,
		Keys: scenarios.Keys{Dist: scenarios.Zipf, Theta: 0.99}, Op: drivers.OpMixed, Mix: scenarios.Mix{Reads: 9, Writes: 1}}
	c := scenarios.Case{Scenario: scenarios.PK, Concurrency: 2, Rows: 100}
	var progress atomic.Int64
	epoch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := scenarios.Instance{Number: 3, ClientCPU: cpustat.Self{}, ServerCPU: cpustat.NewTree(1, "a tree"), Epoch: epoch, Progress: &progress}
	cs, err := Plan{Loop: loop}.remoteCase(tgt, drivers.Workload{}, 1, srv.Endpoints().Paths(), drivers.ServerInfo{}, c, in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"loop": map[string]any{"n": 500.0, "warmup": 20.0, "rounds": 2.0, "blocks": 5.0, "seed": 9.0, "op_timeout_ns": 3e9,
			"keys": map[string]any{"dist": "zipf", "theta": 0.99}, "op": "mixed", "mix": map[string]any{"reads": 9.0, "writes": 1.0}},
		"case":     map[string]any{"scenario": "pk", "concurrency": 2.0, "rows": 100.0},
		"instance": 3.0,
		"epoch":    "2026-01-02T03:04:05Z",
	}
	for k, v := range want {
		if !reflect.DeepEqual(raw[k], v) {
			t.Errorf("the case's %s is %v, want %v", k, raw[k], v)
		}
	}
	if pids, ok := raw["server_pids"].([]any); !ok || len(pids) != 1 || pids[0] != 1.0 {
		t.Errorf("the case's server_pids are %v, want the server meter's root [1]", raw["server_pids"])
	}
	for _, not := range []string{"Progress", "progress", "ClientCPU", "client_cpu", "Options"} {
		if strings.Contains(string(b), `"`+not+`"`) {
			t.Errorf("the case %s holds %q", b, not)
		}
	}
	var read Case
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	if read.Loop != loop || read.Case != c || read.Instance != 3 || !read.Epoch.Equal(epoch) {
		t.Errorf("the client read loop %+v, case %+v, instance %d, epoch %v; want %+v, %+v, 3, %v", read.Loop, read.Case, read.Instance, read.Epoch, loop, c, epoch)
	}
}
