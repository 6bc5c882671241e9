package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
)

// reportFile writes reports/testdata's report-apart.json (schema 2) or
// v1-two.json (schema 1) with edit applied to its JSON, and returns its
// path.
func reportFile(t *testing.T, v1 bool, edit func(r map[string]any)) string {
	t.Helper()
	src := "../../reports/testdata/report-apart.json"
	if v1 {
		src = "../../reports/testdata/v1-two.json"
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	edit(r)
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func firstCase(r map[string]any) map[string]any { return r["summary"].([]any)[0].(map[string]any) }

func firstComparison(r map[string]any) map[string]any {
	return firstCase(r)["comparisons"].([]any)[0].(map[string]any)
}

// dbsockWithin is dbsock(t, args...) that fails the test when it has not
// returned within d (the goroutine is left behind).
func dbsockWithin(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := dbsock(t, args...)
		done <- result{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(d):
		t.Fatalf("dbsock %s did not return within %s", strings.Join(args, " "), d)
	}
	return 0, "", ""
}

// refusedWith fails unless dbsock args exits 2 within half a minute with
// one stderr line holding want.
func refusedWith(t *testing.T, want string, args ...string) {
	t.Helper()
	code, _, stderr := dbsockWithin(t, 30*time.Second, args...)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != ExitUsage || len(lines) != 1 || !strings.Contains(stderr, want) {
		t.Errorf("dbsock %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(args, " "), code, stderr, ExitUsage, want)
	}
}

// TestReportRefusesSpeedupNoRunProduces: a file whose speedup_p50 is
// 1.8e308 (gonum's canvas spun on it for ever, --format html and --plot)
// is refused when it is read, naming the field, in schema 2 and 1.
func TestReportRefusesSpeedupNoRunProduces(t *testing.T) {
	v2 := reportFile(t, false, func(r map[string]any) {
		c := firstComparison(r)
		c["speedup_p50"] = math.MaxFloat64
		delete(c, "speedup_p50_ci")
	})
	v1 := reportFile(t, true, func(r map[string]any) { firstCase(r)["unix_speedup_p50"] = math.MaxFloat64 })
	dir := t.TempDir()
	for _, extra := range [][]string{{"--format", "html"}, {"--plot", filepath.Join(dir, "x.svg")}, {"--plot", filepath.Join(dir, "x.png")}} {
		refusedWith(t, "summary[0].comparisons[0].speedup_p50 is 1.7976931348623157e+308", append([]string{"report", v2}, extra...)...)
		refusedWith(t, "summary[0].unix_speedup_p50 is 1.7976931348623157e+308", append([]string{"report", v1}, extra...)...)
	}
}

// TestReportRendersP50IntervalAlone: a case with a p50 interval and no
// mean interval (schema 2 and 1) renders (it panicked in writeVerdict,
// exit 2 with a trace).
func TestReportRendersP50IntervalAlone(t *testing.T) {
	v2 := reportFile(t, false, func(r map[string]any) { delete(firstComparison(r), "speedup_mean_ci") })
	v1 := reportFile(t, true, func(r map[string]any) { delete(firstCase(r), "unix_speedup_mean_ci") })
	for _, file := range []string{v2, v1} {
		for _, f := range []string{"markdown", "html"} {
			code, stdout, stderr := dbsock(t, "report", file, "--format", f)
			if code != ExitOK || !strings.Contains(stdout, ") at p50; sign test p ") {
				t.Errorf("report --format %s of a case without a mean interval: exit %d, stderr %q", f, code, stderr)
			}
		}
	}
}

// TestReportAndCompareRefuseSidesTheyLack: a schema-2 case whose
// comparison names a baseline it has no side for, that has no sides, or
// that has a side twice is refused by report and by compare, in one line
// naming the field (each rendered as a plausible report).
func TestReportAndCompareRefuseSidesTheyLack(t *testing.T) {
	good := "../../reports/testdata/report-apart.json"
	for _, tt := range []struct {
		edit func(r map[string]any)
		want string
	}{
		{func(r map[string]any) { firstComparison(r)["baseline"] = "tls" },
			`summary[0].comparisons[0].baseline is "tls", a path the case has no side for (its sides: tcp, unix)`},
		{func(r map[string]any) { firstCase(r)["sides"] = []any{} }, "summary[0].sides is empty"},
		{func(r map[string]any) {
			s := firstCase(r)["sides"].([]any)
			firstCase(r)["sides"] = append(s, s[1])
		}, `summary[0].sides[2].path is "unix", a path the case already has a side for`},
	} {
		bad := reportFile(t, false, tt.edit)
		refusedWith(t, tt.want, "report", bad)
		refusedWith(t, tt.want, "compare", good, bad)
		refusedWith(t, tt.want, "compare", bad, good)
	}
}

// TestReportRefusesPastTheBound: a file with more runs than a report may
// hold, or a histogram of the widest geometry (49 MB each; 80 such runs
// took 3 s and 323 MB for --format html), is refused in one line that
// says the bound, and docs/output.md says the same bounds.
func TestReportRefusesPastTheBound(t *testing.T) {
	many := reportFile(t, false, func(r map[string]any) {
		runs := r["runs"].([]any)
		for len(runs) <= results.MaxRuns {
			runs = append(runs, runs[len(runs)%4])
		}
		r["runs"] = runs
	})
	refusedWith(t, fmt.Sprintf("the report holds %d runs; dbsock reads at most %d", results.MaxRuns+1, results.MaxRuns), "report", many, "--format", "html")
	wide := hdrhistogram.New(1, math.MaxInt64, 5)
	_ = wide.RecordValue(1000)
	enc, err := results.EncodeHistogram(wide)
	if err != nil {
		t.Fatal(err)
	}
	widest := reportFile(t, false, func(r map[string]any) {
		for _, run := range r["runs"].([]any) {
			run.(map[string]any)["histogram"] = enc
		}
	})
	refusedWith(t, "runs[0].histogram is refused: a histogram of 1 ns to 9223372036854775807 ns at 5 significant digits: dbsock reads only its own, 1 ns to 60 s at 3 significant digits",
		"report", widest, "--format", "html")
	doc, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, want := range []string{
		fmt.Sprintf("%s runs", comma(results.MaxRuns)), fmt.Sprintf("%s blocks", comma(results.MaxBlocks)),
		fmt.Sprintf("%s cases", comma(results.MaxSummaries)), fmt.Sprintf("%d phases", results.MaxPhases),
		results.HistogramGeometry, fmt.Sprintf("%d MiB", results.MaxReportBytes>>20),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/output.md does not say the bound %q", want)
		}
	}
}

// comma writes n with thousands separated by commas.
func comma(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestErrorsPrintAsOneVisibleLine: an error holding a terminal's escape
// sequence, a carriage return, a NUL and a new line that would forge a
// "dbsock:" line prints as one line of visible text; compare's plain-text
// errors carry no Markdown or HTML escapes.
func TestErrorsPrintAsOneVisibleLine(t *testing.T) {
	name := filepath.Join(t.TempDir(), "r\x1b[2J\r\x00\ndbsock: all is well\u202e.json")
	_, _, stderr := dbsock(t, "report", name)
	if strings.Count(stderr, "\n") != 1 || strings.ContainsAny(stderr, "\x1b\r\x00\u202e") ||
		!strings.Contains(stderr, `r\x1b[2J\r\x00; dbsock: all is well\u202e.json`) {
		t.Errorf("stderr %q: want one line with the escapes visible", stderr)
	}
	// Two reports made on CPUs whose names hold <, |, & and *:
	// --fail-on-regression's error names them in plain text.
	old := reportFile(t, false, func(r map[string]any) { r["environment"].(map[string]any)["cpu_model"] = "Xeon" })
	new := reportFile(t, false, func(r map[string]any) { r["environment"].(map[string]any)["cpu_model"] = "Xeon <b> | x & *y*" })
	code, _, stderr := dbsock(t, "compare", old, new, "--fail-on-regression", "10%")
	if code != ExitFailed || !strings.Contains(stderr, "(CPU) is Xeon in "+old+" and Xeon <b> | x & *y* in "+new) || strings.Contains(stderr, "&lt;") || strings.Contains(stderr, `\|`) {
		t.Errorf("compare --fail-on-regression: exit %d, stderr %q; want the CPU's name as it is", code, stderr)
	}
}

// TestReportReadsWhatARunAccepts: a case of the most workers, the largest
// value, pipeline and rate a run accepts is read (the file bounds are
// what a run can produce, no less).
func TestReportReadsWhatARunAccepts(t *testing.T) {
	file := reportFile(t, false, func(r map[string]any) {
		cases := []map[string]any{firstCase(r)}
		for _, run := range r["runs"].([]any) { // every run of the case: its comparisons are of them all
			cases = append(cases, run.(map[string]any))
		}
		for _, c := range cases {
			c["concurrency"], c["value_size"] = scenarios.MaxConcurrency, pipeline.MaxValueSize
			c["pipeline"], c["rate"] = pipeline.MaxPipeline, scenarios.MaxRate
		}
	})
	if code, _, stderr := dbsock(t, "report", file); code != ExitOK {
		t.Errorf("a case at the run's bounds: exit %d, stderr %q", code, stderr)
	}
}

// TestCompareRefusesRunsMadeDifferently: --fail-on-regression of a run
// against one twice as slow made under another placement judges no case:
// it refuses, naming the field that differs and its value in each file,
// exit 1, no slowdown listed; --across-machines judges it (exit 4).
func TestCompareRefusesRunsMadeDifferently(t *testing.T) {
	old := reportFile(t, false, func(map[string]any) {})
	slower := reportFile(t, false, func(r map[string]any) {
		r["config"].(map[string]any)["placement"] = map[string]any{"mode": "none", "client_cpus": "0-1"}
		for _, run := range r["runs"].([]any) {
			for _, b := range run.(map[string]any)["blocks"].([]any) {
				b := b.(map[string]any)
				b["p50_ns"], b["mean_ns"], b["p99_ns"] = 2*b["p50_ns"].(float64), 2*b["mean_ns"].(float64), 2*b["p99_ns"].(float64)
			}
		}
		for _, side := range firstCase(r)["sides"].([]any) {
			l := side.(map[string]any)["latency_ns"].(map[string]any)
			l["p50"], l["mean"], l["p99"] = 2*l["p50"].(float64), 2*l["mean"].(float64), 2*l["p99"].(float64)
		}
	})
	code, _, stderr := dbsock(t, "compare", old, slower, "--fail-on-regression", "10%")
	if code != ExitFailed || !strings.Contains(stderr, "config.placement (placement) is ") || !strings.Contains(stderr, " and none (not pinned) in "+slower) ||
		!strings.Contains(stderr, "no case was judged") || strings.Contains(stderr, "slower") {
		t.Errorf("another placement: exit %d, stderr %q; want 1, the field named, and no case judged", code, stderr)
	}
	if code, _, stderr = dbsock(t, "compare", old, slower, "--fail-on-regression", "10%", "--across-machines"); code != ExitRegression || !strings.Contains(stderr, "slower") {
		t.Errorf("another placement with --across-machines: exit %d, stderr %q; want %d and the slowdowns", code, stderr, ExitRegression)
	}
}
