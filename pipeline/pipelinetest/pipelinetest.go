// Package pipelinetest runs one registered target end to end for that
// target's own integration tests: a real server from a real provider
// (package targets/targettest), every path measured through the pipeline
// and verified on the server side, and nothing left behind. A target's
// test is then a few lines in its own directory.
package pipelinetest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/placement"
	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
	"github.com/dbsock/dbsock/targets/targettest"
)

// Run measures target with provider ("local", "docker" or "compose"; the
// container providers use the target's offline image), 2 rounds of 300
// ops, and fails the test unless every run was verified on the server side
// and error-free, a container's server ran as its official image's user,
// and no process, container or temp dir is left. With
// "local" it skips (or, under testutil.RequireEnv, fails) unless one of
// binaries is installed; with the others, unless the image is built.

func Run(t *testing.T, target, provider string, binaries ...string) *results.Report {
	t.Helper()
	tg := targettest.Lookup(t, target)
	p := targettest.Provider(t, tg, provider, binaries)
	rep, err := run(t, tg, p, provider)
	if err != nil {
		t.Fatalf("%s with the %s provider: %v", target, provider, err)
	}
	// Every server dbsock starts has the tcp6 path where this host has
	// ::1, and the tls path, verified on the server side, but where its
	// target says otherwise (targettest.Serves), and then the report says
	// why (compose's servers are not asked for tls).
	ti := rep.Targets[0]
	tcp6, tls := targettest.Serves(tg.Name, provider, ti.Server.Product)
	paths := 2
	if ok, _ := supply.IPv6Loopback(); ok && tcp6 {
		paths++
	} else if w := strings.Join(results.Texts(ti.Warnings), " "); ok && !strings.Contains(w, "The tcp6 path was not measured") {
		t.Errorf("%s with %s: tcp6 not measured and not said: warnings %q", target, provider, w)
	}
	if tls {
		paths++
	} else if w := strings.Join(results.Texts(ti.Warnings), " "); provider != "compose" && !strings.Contains(w, "The tls path was not measured") {
		t.Errorf("%s with %s: tls not measured and not said: warnings %q", target, provider, w)
	}
	if len(rep.Runs) != 2*paths {
		t.Fatalf("%d runs, want %d paths x 2 rounds", len(rep.Runs), paths)
	}
	for _, r := range rep.Runs {
		if tlsVersion := r.Negotiated != nil && r.Negotiated.TLSVersion != ""; tlsVersion != (r.Transport == drivers.TLS) {
			t.Errorf("%s round %d: negotiated %+v (%s)", r.Transport, r.Round, r.Negotiated, r.Evidence)
		}
		if r.Transport == drivers.TCP6 && !strings.Contains(r.Evidence, "::1") {
			t.Errorf("tcp6 round %d: evidence %q does not name ::1", r.Round, r.Evidence)
		}
		if !r.TransportVerified || r.Errors != 0 || r.N != 300 || r.Latency.P50 <= 0 || r.Evidence == "" {
			t.Errorf("%s round %d: verified %v (%s), errors %d, n %d, p50 %d", r.Transport, r.Round, r.TransportVerified, r.Evidence, r.Errors, r.N, r.Latency.P50)
		}
	}
	if ti := rep.Targets[0]; ti.Provider != provider || ti.Server.Product == "" {
		t.Errorf("target record %+v: want provider %s and a server product", ti, provider)
	}
	// The offline image drops root as the official image does.
	if ti := rep.Targets[0]; provider != "local" && tg.Container.UID != 0 && ti.RunsAs != "uid "+strconv.Itoa(tg.Container.UID) {
		t.Errorf("the %s container's server ran as %q, want uid %d as in %s", target, ti.RunsAs, tg.Container.UID, tg.Container.Image)
	}
	if kids := testutil.Children(t); len(kids) != 0 {
		t.Errorf("server processes left running: %v", kids)
	}
	if provider != "local" {
		out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+supply.PIDLabel+"="+strconv.Itoa(os.Getpid())).Output()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("containers left running: %q (%v)", out, err)
		}
	}
	return rep
}

// Mismatched runs target against the external endpoints given (which a
// test points at the wrong servers) and returns the run's error.
func Mismatched(t *testing.T, target string, tcp, unix drivers.Endpoint) error {
	t.Helper()
	tg := targettest.Lookup(t, target)
	p := &supply.External{Endpoints: map[string]supply.Pair{target: {TCP: tcp, Unix: unix}}}
	_, err := run(t, tg, p, "external")
	return err
}

func run(t *testing.T, tg *targets.Target, p supply.Provider, name string) (*results.Report, error) {
	t.Helper()
	place, err := placement.Resolve("auto", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := p.(*supply.Local); ok {
		l.ServerCPUs = place.Server
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plan := pipeline.Plan{
		Targets: []*targets.Target{tg}, Provider: p, ProviderName: name, Placement: place,
		Loop:  scenarios.Settings{N: 300, Warmup: 30, Rounds: 2, OpTimeout: 10 * time.Second, Seed: 1},
		Reach: drivers.Reach, FailFast: true,
	}
	if ok, _ := supply.IPv6Loopback(); ok {
		plan.Paths = []drivers.Transport{drivers.TCP, drivers.TCP6, drivers.TLS, drivers.Unix}
		if ps, ok := p.(supply.PathServer); ok && ps.CannotServe(drivers.TLS, []string{tg.Name}) != nil {
			plan.Paths = []drivers.Transport{drivers.TCP, drivers.TCP6, drivers.Unix}
		}
	}
	rep, err := pipeline.Run(ctx, plan)
	if cerr := p.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err == nil && rep.Targets[0].Error != "" {
		err = errorString(rep.Targets[0].Error)
	}
	return rep, err
}

type errorString string

func (e errorString) Error() string { return string(e) }

// Loop is what a test measures: the loop's settings (keys, op, sizes) and
// the rows the ops read, as a plan's Loop and Rows.
type Loop struct {
	scenarios.Settings
	Rows int
}

// Measure runs target against the servers p supplies with a test's own
// loop and returns the report; any error fails the test.
func Measure(t *testing.T, target string, p supply.Provider, opt Loop) *results.Report {
	t.Helper()
	rep, err := MeasureOwn(t, target, p, opt, Own{})
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	return rep
}

// Own is the user's own op and keys for MeasureOwn (--query, --keys-from).
type Own struct {
	Query    string
	KeysFrom *pipeline.KeySource
	// Settings are the target's own settings as JSON, decoded into its
	// defaults (e.g. {"collection": "dbsock.user"} for mongo).
	Settings string
}

// MeasureOwn is Measure with the user's own op and keys; it returns the
// run's error (a bad statement wraps drivers.ErrStatement) instead of
// failing the test.
func MeasureOwn(t *testing.T, target string, p supply.Provider, opt Loop, own Own) (*results.Report, error) {
	t.Helper()
	place, err := placement.Resolve("auto", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if opt.OpTimeout == 0 {
		opt.OpTimeout = 10 * time.Second
	}
	plan := pipeline.Plan{Targets: []*targets.Target{targettest.Lookup(t, target)}, Provider: p, ProviderName: p.Name(),
		Placement: place, Loop: opt.Settings, Workload: pipeline.Workload{Rows: opt.Rows}, Reach: drivers.Reach}
	if own.Query != "" {
		plan.Workload.Queries = map[string]string{target: own.Query}
	}
	if own.KeysFrom != nil {
		plan.Workload.KeysFrom = map[string]pipeline.KeySource{target: *own.KeysFrom}
	}
	if own.Settings != "" {
		settings := targettest.Lookup(t, target).Settings()
		if err := json.Unmarshal([]byte(own.Settings), settings); err != nil {
			t.Fatal(err)
		}
		if err := settings.Validate(); err != nil {
			t.Fatal(err)
		}
		plan.Settings = map[string]targets.Settings{target: settings}
	}
	rep, err := pipeline.Run(ctx, plan)
	if err == nil && rep.Targets[0].Error != "" {
		err = errorString(rep.Targets[0].Error)
	}
	return rep, err
}

// MeasurePaths runs tg against the local provider's servers over paths
// (compared with baseline; "" is TCP), 2 rounds of 200 ops, failing fast,
// and returns the report and the run's error.
func MeasurePaths(t *testing.T, tg *targets.Target, paths []drivers.Transport, baseline drivers.Transport) (*results.Report, error) {
	t.Helper()
	return MeasurePathsWith(t, tg, "local", paths, baseline)
}

// MeasurePathsWith is MeasurePaths with provider ("local" or "docker",
// whose containers are pinned as the local servers are).
func MeasurePathsWith(t *testing.T, tg *targets.Target, provider string, paths []drivers.Transport, baseline drivers.Transport) (*results.Report, error) {
	t.Helper()
	place, err := placement.Resolve("auto", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var p supply.Provider
	if provider == "local" {
		l := supply.NewLocal()
		l.ServerCPUs, p = place.Server, l
	} else {
		p = targettest.Provider(t, tg, provider, nil) // skips without its image, fails under testutil.RequireEnv
		if d, ok := p.(*supply.Docker); ok {
			d.ServerCPUs = place.Server
		}
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return pipeline.Run(ctx, pipeline.Plan{
		Targets: []*targets.Target{tg}, Provider: p, ProviderName: provider, Placement: place,
		Loop:  scenarios.Settings{N: 200, Warmup: 20, Rounds: 2, OpTimeout: 10 * time.Second, Seed: 1},
		Reach: drivers.Reach, FailFast: true, Paths: paths, Baseline: baseline,
	})
}

// HopRoutes are the four routes of two legs through a hop (the client's
// leg, then the hop's to the server), as --via asks for them.
var HopRoutes = []drivers.Transport{drivers.TCP, drivers.Unix, drivers.TCPHopTCP, drivers.UnixHopTCP}

// MeasureHops is MeasurePathsWith over HopRoutes, each compared with both
// legs on TCP.
func MeasureHops(t *testing.T, tg *targets.Target, provider string) (*results.Report, error) {
	t.Helper()
	return MeasurePathsWith(t, tg, provider, HopRoutes, drivers.TCPHopTCP)
}

// Failures is a run's error (err) and every run's failure in rep, in one
// string: where a refused leg's evidence is to be found.
func Failures(rep *results.Report, err error) string {
	got := ""
	if err != nil {
		got = err.Error()
	}
	if rep != nil {
		for _, r := range rep.Runs {
			got += " " + r.Failure.Error
		}
	}
	return got
}

// ReportSays renders rep in Markdown and fails t for each of lines it
// does not contain.
func ReportSays(t *testing.T, rep *results.Report, lines ...string) {
	t.Helper()
	var md strings.Builder
	if err := reports.Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		if !strings.Contains(md.String(), line) {
			t.Errorf("the report lacks %q:\n%s", line, md.String())
		}
	}
}
