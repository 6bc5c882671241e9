package reports

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// fixture is a fixed two-round report, as a real run would produce.
func fixture(t *testing.T) *results.Report {
	t.Helper()
	r := &results.Report{
		SchemaVersion: results.SchemaVersion,
		Tool:          results.Tool{Name: "dbsock", Version: "v0.1.0", Commit: "0123456789abcdef"},
		StartedAt:     time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC),
		Environment: results.Environment{OS: "linux", Arch: "amd64", Kernel: "6.1.0", CPUModel: "Test CPU", NumCPU: 2,
			GoVersion: "go1.26.8", Drivers: map[string]string{"github.com/redis/go-redis/v9": "v9.23.0"}},
		Config: results.Config{N: 4, Warmup: 1, Rounds: 2, Provider: "local", Scenario: "pk", Blocks: 4, Seed: 7,
			Placement: results.Placement{Mode: "auto", ClientCPUs: "0", ServerCPUs: "0",
				Reason: "auto: 2 logical CPUs (fewer than 4), so client and servers share CPU 0"}},
		Targets: []results.Target{{
			Name: "redis", Provenance: drivers.Provenance{Provider: "local", Origin: "local process /usr/bin/redis-server (pid 42)"},
			Server:    drivers.ServerInfo{Product: "Redis", Version: "7.0.15", Detail: "mode standalone"},
			Operation: "`GET dbsock:user:1` (one round trip per op)", ServerCPUs: "0",
			Endpoints: []drivers.Endpoint{{Transport: drivers.TCP, Address: "127.0.0.1:6379", Password: "secret"},
				{Transport: drivers.Unix, Address: "/tmp/dbsock-1/redis.sock", Password: "secret"}},
		}},
	}
	add := func(tr drivers.Transport, round int, values ...int64) {
		h := results.NewHistogram()
		var blocks []results.Block
		for i, v := range values {
			_ = h.RecordValue(v)
			blocks = append(blocks, results.Block{Pair: i, Index: 2 * i, StartNs: int64(round*1000+i*100) * 1e6, ElapsedNs: 12500, N: 1, P50: v, Mean: float64(v), P99: v})
		}
		enc, err := results.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		ev := "client addr=127.0.0.1:5000 flags=N"
		if tr == drivers.Unix {
			ev = "client addr=/tmp/dbsock-1/redis.sock:0 flags=U"
		}
		r.Runs = append(r.Runs, results.Run{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 1, ValueSize: 6}, Transport: tr, Round: round,
			N: int64(len(values)), Connection: results.Connection{TransportVerified: true, Evidence: ev},
			Timing: results.Timing{Latency: results.LatencyOf(h), ElapsedNs: 50000}, Histogram: enc, Blocks: blocks})
	}
	add(drivers.TCP, 1, 10000, 11000, 12000, 30000)
	add(drivers.Unix, 1, 7000, 7500, 8000, 20000)
	add(drivers.Unix, 2, 7100, 7400, 8100, 21000)
	add(drivers.TCP, 2, 10100, 10900, 12100, 31000)
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is intended, run go test ./reports -update\n--- got ---\n%s", name, got)
	}
}

func TestMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md", buf.Bytes())
	if strings.Contains(buf.String(), "secret") {
		t.Fatal("the Markdown report contains the password")
	}
}

func TestWriteRejectsUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "yaml", fixture(t)); err == nil || !strings.Contains(err.Error(), "markdown") {
		t.Fatalf("got %v, want an error listing the formats", err)
	}
}

func TestMarkdownNamesAValueSizeAskedFor(t *testing.T) {
	r := fixture(t)
	var plain bytes.Buffer
	if err := Markdown(&plain, r); err != nil {
		t.Fatal(err)
	}
	r.Config.ValueSizes = []int{6}
	var sized bytes.Buffer
	if err := Markdown(&sized, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "#### redis: pk") || !strings.Contains(sized.String(), "#### redis: pk, 6 B values") {
		t.Fatalf("a plain run must not, and a --value-size run must, head its table with the size:\n%s", sized.String())
	}
}

func TestMarkdownSummaryIsTheHeadline(t *testing.T) {
	var full, summary bytes.Buffer
	if err := Write(&full, "markdown", fixture(t)); err != nil {
		t.Fatal(err)
	}
	if err := Write(&summary, "summary", fixture(t)); err != nil {
		t.Fatal(err)
	}
	// The full report's beginning, without the links to its details,
	// which the summary does not have.
	if !strings.HasPrefix(strings.ReplaceAll(full.String(), " ([details](#details))", ""), summary.String()) || strings.Contains(summary.String(), "(#details)") {
		t.Fatalf("the summary is not the full report's beginning without links to its details:\n%s", summary.String())
	}
	for _, banned := range []string{"/tmp/", "pid 42", "Verified"} {
		if strings.Contains(summary.String(), banned) {
			t.Errorf("the headline shows %q", banned)
		}
	}
	if n := strings.Count(summary.String(), "\n"); n > 22 { // the table, its notes, the method's paragraph and list of five

		t.Errorf("the summary of one target is %d lines", n)
	}
}

func TestDecompositionAddsUp(t *testing.T) {
	r := fixture(t)
	base := r.Runs
	for _, name := range []string{"floor", "echo"} {
		for _, run := range base {
			run.Target = name
			r.Runs = append(r.Runs, run)
		}
		r.Targets = append(r.Targets, results.Target{Name: name})
	}
	// Make echo slower than floor and redis slower than echo.
	for i := range r.Runs {
		scale := map[string]float64{"floor": 0.5, "echo": 0.8, "redis": 1}[r.Runs[i].Target]
		h := results.NewHistogram()
		_ = h.RecordValue(int64(float64(r.Runs[i].Latency.P50) * scale))
		r.Runs[i].Histogram, _ = results.EncodeHistogram(h)
		r.Runs[i].Latency = results.LatencyOf(h)
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	parts := results.Decompose(r)
	if len(parts) != 2 {
		t.Fatalf("%d decompositions, want redis over TCP and Unix: %+v", len(parts), parts)
	}
	for _, d := range parts {
		if d.Target != "redis" || d.Kernel <= 0 || d.Client <= 0 || d.Server <= 0 || math.Abs(d.Kernel+d.Client+d.Server-d.Total) > 1e-6 {
			t.Fatalf("parts do not add up: %+v", d)
		}
	}
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "### Where the microseconds go") || !strings.Contains(b.String(), "| redis | Unix |") {
		t.Fatalf("no decomposition table:\n%s", b.String())
	}
	if got := titles(t, r); !slices.Contains(got, "Where the p50 goes (µs)") {
		t.Fatalf("panels %q lack the stacked decomposition", got)
	}
	if results.Decompose(fixture(t)) != nil {
		t.Fatal("a report without floor and echo has a decomposition")
	}
}

// TestHeadlineMarksATargetsWarning: a warning on the target (not only on
// its case) marks its headline row.
func TestHeadlineMarksATargetsWarning(t *testing.T) {
	r := fixture(t)
	r.Targets[0].Warnings = []results.Warning{results.Says("FerretDB read one document")}
	var b strings.Builder
	if err := MarkdownSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "†") {
		t.Fatalf("no † in the headline:\n%s", b.String())
	}
}

// TestThresholdsReadAsWritten: a threshold's expression reads as the user
// wrote it, in Markdown (a GitHub job summary shows a code span as it is)
// and in HTML (escaped once), not as "&gt;" nor "&amp;gt;".
func TestThresholdsReadAsWritten(t *testing.T) {
	r := &results.Report{Thresholds: []results.ThresholdResult{{Expr: "redis.unix_speedup_p50.lo>=1.0", OK: true, ActualText: "1.2"}}}
	var md, html strings.Builder
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| `redis.unix_speedup_p50.lo>=1.0` | passed |") {
		t.Errorf("Markdown thresholds:\n%s", md.String())
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "<code>redis.unix_speedup_p50.lo&gt;=1.0</code>") {
		t.Errorf("HTML thresholds: no <code>redis.unix_speedup_p50.lo&gt;=1.0</code> in\n%s", html.String())
	}
}

// TestMethodSaysWhatAnInstanceWas: the headline's method says "restarted"
// only of servers dbsock started; instances of a server it did not start
// are fresh connections to one process, as its warning says.
func TestMethodSaysWhatAnInstanceWas(t *testing.T) {
	for provider, want := range map[string]string{
		"local":    "9 server instances (restarted between them)",
		"external": "9 server instances (fresh connections to the same server process each: dbsock did not start it, so it could not restart it)",
	} {
		r := &results.Report{Config: results.Config{Instances: 9, Rounds: 1, N: 10}, Targets: []results.Target{{Name: "redis", Provenance: drivers.Provenance{Provider: provider}}}}
		if got := methodSentence(r); !strings.Contains(got, want) {
			t.Errorf("%s: %q does not say %q", provider, got, want)
		}
	}
}

// TestProviderPhrase: the method names the provider that supplied the
// servers, what auto chose, and each target's where they differ.
func TestProviderPhrase(t *testing.T) {
	rep := func(config string, providers ...string) *results.Report {
		r := &results.Report{Config: results.Config{Provider: config}}
		for i, p := range providers {
			r.Targets = append(r.Targets, results.Target{Name: []string{"mysql", "redis", "postgres"}[i], Provenance: drivers.Provenance{Provider: p}})
		}
		return r
	}
	for _, tt := range []struct {
		r    *results.Report
		want string
	}{
		{rep("local", "local", "local"), "local provider"},
		{rep("auto", "docker", "docker"), "docker provider (chosen by auto)"},
		{rep("auto", "local", "docker", "local"), "servers from the local provider (mysql, postgres) and the docker provider (redis), chosen by auto"},
		{rep("auto"), "auto provider"},
	} {
		if got := providerPhrase(tt.r); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestPooledOutsideThePairedInterval: when the ratio of the headline's
// pooled p50s lies outside the paired interval (drift between blocks moved
// the pooled figures), the speedup is marked and a footnote says which
// figure is which, in Markdown, HTML and the JSON's fields alike.
func TestPooledOutsideThePairedInterval(t *testing.T) {
	r := fixture(t)
	s := &r.Summary[0]
	for i := range s.Sides {
		if s.Sides[i].Path == drivers.TCP {
			s.Sides[i].Latency.P50 = 9_100 // 9.1 / 7.5 = 1.21, below the interval 1.42–1.50
		}
	}
	unix, _ := s.SideOf(drivers.Unix)
	c := s.ComparisonOf(drivers.Unix)
	c.SpeedupP50Pooled = 9_100 / float64(unix.Latency.P50)
	if ci := c.SpeedupP50CI; ci == nil || c.SpeedupP50Pooled >= ci.Lo {
		t.Fatalf("fixture: pooled %.3f inside %+v", c.SpeedupP50Pooled, ci)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report-apart.md", md.Bytes())
	for _, want := range []string{"| 9.1 µs | 7.5 µs | 1.47× (1.42–1.50) paired; 1.21× from the pooled p50s |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	var html, js bytes.Buffer
	if err := Write(&html, "html", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "1.47× (1.42–1.50) paired; 1.21× from the pooled p50s") || strings.Contains(html.String(), "‡") {
		t.Error("the HTML page does not mark the speedup whose pooled ratio lies apart")
	}
	if err := Write(&js, "json", r); err != nil {
		t.Fatal(err)
	}
	// One golden file per format, as a reader gets each.
	// The chart carries its font (a browser without it would draw the
	// titles wider than the panels); the golden file holds a stand-in.
	if !strings.Contains(html.String(), `font-family:"Liberation Serif"`) || !strings.Contains(html.String(), "data:font/ttf;charset=utf-8;base64,") {
		t.Error("the HTML page's chart does not carry its font")
	}
	golden(t, "report-apart.html", regexp.MustCompile(`base64,[A-Za-z0-9+/=]+`).ReplaceAll(html.Bytes(), []byte("base64,FONT")))
	golden(t, "report-apart.json", js.Bytes())
	var csv bytes.Buffer
	if err := Write(&csv, "csv", r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report-apart.csv", csv.Bytes())
	if !strings.Contains(js.String(), `"speedup_p50_pooled": 1.21`) || !strings.Contains(js.String(), `"speedup_p50": 1.4`) {
		t.Error("the JSON does not give both the paired and the pooled speedup")
	}
	// Inside the interval, no mark.
	var plain bytes.Buffer
	if err := Markdown(&plain, fixture(t)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "‡") {
		t.Error("a speedup whose pooled ratio lies inside its interval is marked")
	}
}

// TestExternalServerIsSaidAsItRan: with a server dbsock did not start, the
// details do not say it was restarted between instances, and neither the
// Environment nor the placement sentence gives it the CPUs dbsock would
// have pinned a server to: they give what dbsock read of it.
func TestExternalServerIsSaidAsItRan(t *testing.T) {
	r := &results.Report{Config: results.Config{Instances: 9, Rounds: 1, N: 10, Provider: "external",
		Placement: results.Placement{Mode: "auto", ClientCPUs: "0", ServerCPUs: "1", Reason: "auto: client and servers on CPUs of their own"}},
		Targets: []results.Target{{Name: "redis", Provenance: drivers.Provenance{Provider: "external"}, ServerCPUs: "0,1 (the server's own affinity)"}}}
	var b strings.Builder
	writeMethod(&b, r)
	writeEnvironment(&b, r)
	got := b.String()
	for _, want := range []string{
		"in 9 server instances (fresh connections to the same server process each: dbsock did not start it, so it could not restart it)",
		"CPU placement \"auto\": the client ran pinned to CPU 0; the servers not started by dbsock, so not pinned by it (redis on CPUs 0,1).",
		"| Placement      | auto (client CPUs 0, servers not started by dbsock, so not pinned by it (redis on CPUs 0,1)) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	for _, wrong := range []string{"was restarted", "server CPUs 1", "of their own"} {
		if strings.Contains(got, wrong) {
			t.Errorf("says %q of a server dbsock did not start:\n%s", wrong, got)
		}
	}
}

// TestFailedCaseHasNoFigures: a case whose run stopped before any op (its
// server went away) says in the headline that it failed, with no figure:
// never "0 ns | 0 ns | 0.00×". So does a case at a rate.
func TestFailedCaseHasNoFigures(t *testing.T) {
	for _, rate := range []float64{0, 3000} {
		r := &results.Report{SchemaVersion: results.SchemaVersion, Targets: []results.Target{{Name: "redis", Error: "round 1 over tcp: connection refused"}},
			Runs: []results.Run{{Case: results.Case{Target: "redis", Scenario: "pk", Concurrency: 1, Rate: rate}, Transport: drivers.TCP, Round: 1,
				Failure: results.Failure{Incomplete: true, Error: "dial tcp 127.0.0.1:6379: connection refused"}}}}
		if err := r.Summarize(); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Markdown(&b, r); err != nil {
			t.Fatal(err)
		}
		head := strings.SplitN(b.String(), "## Details", 2)[0]
		row := ""
		for _, line := range strings.Split(head, "\n") {
			if strings.HasPrefix(line, "| redis") {
				row = line
			}
		}
		if !strings.Contains(row, "failed: no result (see its details)") || strings.Contains(row, "0 ns") || strings.Contains(row, "0.00×") || strings.Contains(row, "0 / 0") {
			t.Errorf("at rate %g, the failed case's row is %q; want it to say it failed, with no figures", rate, row)
		}
	}
}

// TestMethodNamesOnlyPathsMeasured: a run asked for the four routes of
// two legs whose hop serves only tcp-tcp and unix-tcp (twemproxy) says it
// timed those two, and its ratio over "the path's", not "over TCP, Unix,
// TCP, hop TCP and Unix, hop TCP" with a Unix never timed.
func TestMethodNamesOnlyPathsMeasured(t *testing.T) {
	side := func(p drivers.Transport) results.PathSide { return results.PathSide{Path: p} }
	r := &results.Report{Config: results.Config{Instances: 1, Rounds: 1, N: 10, Routes: results.Routes{Baseline: drivers.TCPHopTCP,
		Paths: []drivers.Transport{drivers.TCP, drivers.Unix, drivers.TCPHopTCP, drivers.UnixHopTCP}}},
		Summary: []results.Summary{{Sides: []results.PathSide{side(drivers.TCPHopTCP), side(drivers.UnixHopTCP)}}}}
	got := methodSentence(r)
	for _, want := range []string{"over TCP, hop TCP and Unix, hop TCP.", "paired ratios TCP, hop TCP/the path's"} {
		if !strings.Contains(got, want) {
			t.Errorf("method %q does not say %q", got, want)
		}
	}
	r.Summary[0].Sides = append(r.Summary[0].Sides, side(drivers.TCP), side(drivers.Unix))
	if got := methodSentence(r); !strings.Contains(got, "over TCP, Unix, TCP, hop TCP and Unix, hop TCP.") || !strings.Contains(got, "TCP, hop TCP/Unix") {
		t.Errorf("all four measured: method %q", got)
	}
}
