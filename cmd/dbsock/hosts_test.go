package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
)

// TestReportOfTwoHosts measures redis twice under two host labels and
// reads both files with dbsock report: every file carries its host facts,
// the matrix has a column per host, a directory reads as its files do,
// and files measured differently are refused, or grouped with --by.
func TestReportOfTwoHosts(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	t.Setenv("TMPDIR", shortTempDir(t))
	dir := t.TempDir()
	files := map[string]string{}
	for _, host := range []string{"a", "b"} {
		files[host] = filepath.Join(dir, host+".json")
		code, _, stderr := dbsock(t, "run", "redis", "--provider", "local", "--host", host, "--n", "300", "--warmup", "30",
			"--instances", "1", "--rounds", "2", "-q", "--out", files[host])
		if code != 0 {
			t.Fatalf("run --host %s: exit status %d; stderr:\n%s", host, code, stderr)
		}
		rep, err := readReport(files[host])
		if err != nil {
			t.Fatal(err)
		}
		e := rep.Environment
		if e.Host != host || e.SyscallNs <= 0 || e.CPU == nil || e.KernelCmdline == "" {
			t.Errorf("%s: host facts %q, syscall %v ns, cpu %+v, cmdline %q", host, e.Host, e.SyscallNs, e.CPU, e.KernelCmdline)
		}
		if cost := time.Duration(e.FactsNs); cost <= 0 || cost > 2*time.Second {
			t.Errorf("%s: the host facts took %v, want well under 2s", host, cost)
		}
		t.Logf("%s: host facts took %v, getppid %.0f ns, wake-up round trip %.0f ns on one CPU, %.0f ns across two", host, time.Duration(e.FactsNs), e.SyscallNs, e.WakeSameCPUNs, e.WakeCrossCPUNs)
	}
	png := filepath.Join(dir, "hosts.png")
	code, out, stderr := dbsock(t, "report", files["a"], files["b"], "--plot", png)
	if code != 0 {
		t.Fatalf("report: exit status %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"| target | case | paths | a | b |", "| redis | pk (resp3), 6 B values | Unix vs TCP | ", "|  | kernel |", "|  | file | ", "hosts.png)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the matrix lacks %q:\n%s", want, out)
		}
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("picture: %v", err)
	}
	_, fromFiles, _ := dbsock(t, "report", files["a"], files["b"])
	if code, fromDir, stderr := dbsock(t, "report", dir); code != 0 || fromDir != fromFiles {
		t.Errorf("report DIR: exit status %d (%s), want the files' report:\n%s", code, stderr, fromDir)
	}
	checkHostsFormats(t, files["a"], files["b"])
	checkHostsRefused(t, dir, files["a"], files["b"])
}

// checkHostsFormats reads the two files' report as JSON and CSV.
func checkHostsFormats(t *testing.T, a, b string) {
	t.Helper()
	_, js, _ := dbsock(t, "report", a, b, "--format", "json")
	var h reports.Hosts
	if err := json.Unmarshal([]byte(js), &h); err != nil || len(h.Matrices) != 1 || len(h.Matrices[0].Hosts) != 2 {
		t.Fatalf("JSON: %v\n%s", err, js)
	}
	for _, row := range h.Matrices[0].Rows {
		for i, c := range row.Cells {
			if c == nil || c.SpeedupP50 <= 0 || c.Verdict == "" {
				t.Errorf("row %s, host %s: cell %+v, want the host's own comparison", row.Label(), h.Matrices[0].Hosts[i].Label, c)
			}
		}
	}
	_, cs, _ := dbsock(t, "report", a, b, "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(cs)).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][13] != "a" || recs[2][13] != "b" {
		t.Errorf("CSV: %v, %q", err, recs)
	}
}

// checkHostsRefused: a third file of another scenario is refused (exit
// 2, one line naming the field and --by), and grouped with --by
// scenario; an HTML report of several files is refused.
func checkHostsRefused(t *testing.T, dir, a, b string) {
	t.Helper()
	raw, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["config"].(map[string]any)["scenario"] = "connect"
	doc["environment"].(map[string]any)["host"] = "c"
	other, _ := json.Marshal(doc)
	c := filepath.Join(dir, "c.json")
	if err := os.WriteFile(c, other, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := dbsock(t, "report", a, b, c)
	if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "scenario (config.scenario)") || !strings.Contains(stderr, "--by scenario") {
		t.Errorf("another scenario: exit status %d, stderr %q; want 2 and one line naming it", code, stderr)
	}
	code, out, stderr := dbsock(t, "report", a, b, c, "--by", "scenario")
	if code != 0 || !strings.Contains(out, "## scenario pk") || !strings.Contains(out, "## scenario connect") {
		t.Errorf("--by scenario: exit status %d (%s):\n%s", code, stderr, out)
	}
	if code, _, stderr := dbsock(t, "report", a, b, "--format", "html"); code != ExitUsage || !strings.Contains(stderr, "markdown, json, csv") {
		t.Errorf("--format html of two files: exit status %d, %q", code, stderr)
	}
}

// TestReportOfTwoHostsExplained measures redis with --explain under two
// host labels and two placements and reads both files with dbsock report:
// each host's layers are under the matrix, and b's line names the layer
// that moved its speedup from a's, its shares adding up to the change, in
// the Markdown, the JSON and the CSV alike.
func TestReportOfTwoHostsExplained(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	t.Setenv("TMPDIR", shortTempDir(t))
	dir := t.TempDir()
	var files []string
	for _, run := range [][2]string{{"a", "shared"}, {"b", "split"}} {
		f := filepath.Join(dir, run[0]+".json")
		code, _, stderr := dbsock(t, "run", "redis", "--provider", "local", "--explain", "--host", run[0], "--placement", run[1], "--n", "300", "--warmup", "30",
			"--instances", "1", "--rounds", "2", "-q", "--out", f)
		if code != 0 {
			t.Fatalf("run --host %s: exit status %d; stderr:\n%s", run[0], code, stderr)
		}
		files = append(files, f)
	}
	_, js, _ := dbsock(t, "report", files[0], files[1], "--format", "json")
	var h reports.Hosts
	if err := json.Unmarshal([]byte(js), &h); err != nil || len(h.Matrices) != 1 {
		t.Fatalf("JSON: %v\n%s", err, js)
	}
	var shift *results.Shift
	for _, row := range h.Matrices[0].Rows {
		if row.Target == "redis" && row.Cells[0] != nil && row.Cells[1] != nil && row.Cells[0].Layers != nil {
			shift = row.Cells[1].Shift
		}
	}
	if shift == nil || !slices.Contains([]string{results.LayerKernel, results.LayerClient, results.LayerServer}, shift.Layer) {
		t.Fatalf("redis's row: b's shift %+v, want a layer named against a:\n%s", shift, js)
	}
	sum := 0.0
	for _, s := range shift.Shares {
		sum += s.Share
	}
	if math.Abs(sum-(shift.Speedup-shift.Reference)) > 1e-9 {
		t.Errorf("shares %+v add up to %v, not the change %v", shift.Shares, sum, shift.Speedup-shift.Reference)
	}
	code, md, stderr := dbsock(t, "report", files[0], files[1])
	if code != 0 {
		t.Fatalf("report: exit status %d; stderr:\n%s", code, stderr)
	}
	t.Logf("report:\n%s", md)
	for _, want := range []string{"### Where each host's p50 goes", "| redis | pk (resp3), 6 B values | Unix vs TCP | kernel floor | TCP ",
		"- a: the reference: TCP p50 / Unix p50 ", "- b: TCP p50 / Unix p50 is ", "the layer that moved it most is "} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	_, cs, _ := dbsock(t, "report", files[0], files[1], "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(cs)).ReadAll()
	if err != nil || len(recs) < 3 {
		t.Fatalf("CSV: %v\n%s", err, cs)
	}
	col := map[string]string{}
	for i, name := range recs[0] {
		col[name] = recs[2][i] // redis on b
	}
	if col["host"] != "b" || col["shift_against"] != "a" || col["shift_layer"] != shift.Layer {
		t.Errorf("CSV: b's row %v, want it against a naming %s", col, shift.Layer)
	}
}

// TestReportOfADirectoryOfOneFile: a directory is a fleet's files, so one
// of a single file (a fleet of one node) is still the matrix, a column for
// its host, while that file named alone is its own report.
func TestReportOfADirectoryOfOneFile(t *testing.T) {
	src, err := os.ReadFile("../../reports/testdata/report-apart.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "node-a.json")
	if err := os.WriteFile(file, src, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := dbsock(t, "report", dir)
	if code != 0 || !strings.Contains(out, "| target | case | paths | ") || !strings.Contains(out, "1 result file side by side") || !strings.Contains(out, "| node-a |") {
		t.Errorf("report DIR of one file: exit status %d (%s), want the matrix of its one host:\n%s", code, stderr, out)
	}
	code, single, stderr := dbsock(t, "report", file)
	if code != 0 || single == out || strings.Contains(single, "| target | case | paths | ") {
		t.Errorf("report FILE: exit status %d (%s), want the file's own report, not the matrix:\n%s", code, stderr, single)
	}
}
