package reports

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/sysinfo"
)

// hostFile is the fixture as host label's file, its meltdown line
// meltdown: two such files differ in nothing else.
func hostFile(t *testing.T, label, meltdown string) HostFile {
	r := fixture(t)
	r.Environment.Host = label
	r.Environment.CPU = &sysinfo.CPUID{Vendor: "AuthenticAMD", Family: "25", Model: "1", Stepping: "1", Microcode: "0xa0011d1"}
	r.Environment.KernelCmdline = "console=ttyS0 quiet"
	r.Environment.SyscallNs = 61
	r.Environment.WakeSameCPUNs, r.Environment.WakeCrossCPUNs = 2412, 64875
	r.Environment.Vulnerabilities = map[string]string{"meltdown": meltdown, "spectre_v1": "Mitigation: usercopy/swapgs barriers"}
	return HostFile{Path: label + ".json", Report: r}
}

func TestHostsDifferingOnlyInMitigationsAreTwoHosts(t *testing.T) {
	h, err := NewHosts([]HostFile{hostFile(t, "a", "Not affected"), hostFile(t, "b", "Mitigation: PTI")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Matrices) != 1 {
		t.Fatalf("%d matrices, want 1", len(h.Matrices))
	}
	m := h.Matrices[0]
	if len(m.Hosts) != 2 || m.Hosts[0].Label != "a" || m.Hosts[1].Label != "b" {
		t.Fatalf("hosts %+v, want a and b", m.Hosts)
	}
	if len(m.Rows) != 1 || m.Rows[0].Cells[0] == nil || m.Rows[0].Cells[1] == nil {
		t.Fatalf("rows %+v, want one with a cell per host", m.Rows)
	}
	differ := map[string]bool{}
	for _, f := range m.Facts {
		differ[f.Name] = f.Differs
	}
	if !differ["vulnerability meltdown"] || differ["vulnerability spectre_v1"] || differ["kernel"] || differ["microcode"] {
		t.Errorf("differing facts %v: want meltdown's alone", differ)
	}
	var md bytes.Buffer
	if err := WriteHosts(context.Background(), &md, "markdown", h, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "hosts.md", md.Bytes())
	for _, want := range []string{"| ≠ | vulnerability meltdown | Not affected | Mitigation: PTI |", "|  | kernel | 6.1.0 | 6.1.0 |", "| target | case | paths | a | b |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	var c bytes.Buffer
	if err := WriteHosts(context.Background(), &c, "csv", h, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "hosts.csv", c.Bytes())
	var j bytes.Buffer
	if err := WriteHosts(context.Background(), &j, "json", h, false); err != nil {
		t.Fatal(err)
	}
	var back Hosts
	if err := json.Unmarshal(j.Bytes(), &back); err != nil || back.Schema != HostsSchema || len(back.Matrices[0].Rows[0].Cells) != 2 {
		t.Errorf("JSON read back: %v, %+v", err, back)
	}
}

func TestHostsOfDifferentScenariosAreRefusedOrGrouped(t *testing.T) {
	a, b := hostFile(t, "a", "Not affected"), hostFile(t, "b", "Not affected")
	b.Report.Config.Scenario = "connect"
	_, err := NewHosts([]HostFile{a, b}, nil)
	var differs *MethodDiffers
	if !errors.As(err, &differs) || differs.Field.Name != "scenario" {
		t.Fatalf("got %v, want the scenario named", err)
	}
	for _, want := range []string{"config.scenario", `"pk" against "connect"`, "--by scenario", "a.json", "b.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	h, err := NewHosts([]HostFile{a, b}, []string{"scenario"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Matrices) != 2 || h.Matrices[0].Group[0].Value != "pk" || h.Matrices[1].Group[0].Value != "connect" {
		t.Fatalf("matrices %+v, want one per scenario", h.Matrices)
	}
	c := hostFile(t, "c", "Not affected")
	c.Report.Config.ValueSizes = []int{1024}
	if _, err := NewHosts([]HostFile{a, b, c}, []string{"scenario"}); !errors.As(err, &differs) || differs.Field.Name != "value-size" {
		t.Errorf("grouped by scenario, a value size that differs: got %v, want it refused", err)
	}
	if _, err := NewHosts([]HostFile{a, b}, []string{"colour"}); err == nil || !strings.Contains(err.Error(), "scenario, keys, value-size or rate") {
		t.Errorf("--by colour: got %v, want the fields listed", err)
	}
}

func TestHostsEscapeAHostileLabel(t *testing.T) {
	hostile := "<img src=x onerror=alert(1)>|**x**\x1b[31m\nred"
	a, b := hostFile(t, hostile, "Not affected"), hostFile(t, "b", "Not affected")
	a.Path = "a.json"
	h, err := NewHosts([]HostFile{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteHosts(context.Background(), &md, "markdown", h, false); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<img", "\x1b", "|**x", "\nred"} {
		if strings.Contains(md.String(), bad) {
			t.Errorf("Markdown holds %q:\n%s", bad, md.String())
		}
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| target |") && cells(line) != 5 {
			t.Errorf("the header %q has %d cells, want 5: the label broke out of its cell", line, cells(line))
		}
	}
	var c bytes.Buffer
	if err := WriteHosts(context.Background(), &c, "csv", h, false); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][13] != "<img src=x onerror=alert(1)>|**x**[31m red" {
		t.Errorf("CSV: %v, %q", err, recs)
	}
	var one bytes.Buffer
	if err := Markdown(&one, a.Report); err != nil || strings.Contains(one.String(), "<img") || !strings.Contains(one.String(), "| Host ") {
		t.Errorf("one file's Environment: %v\n%s", err, one.String())
	}
	var png bytes.Buffer
	if err := PlotHosts(context.Background(), &png, ".png", h); err != nil || png.Len() == 0 {
		t.Errorf("picture: %v", err)
	}
}

// cells counts a Markdown table line's cells: its | not escaped, less one.
func cells(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if line[i] == '|' {
			n++
		}
	}
	return n - 1
}

func TestHostsOfOneLabelAreToldApartByTheirFiles(t *testing.T) {
	a, b := hostFile(t, "db", "Not affected"), hostFile(t, "db", "Not affected")
	a.Path, b.Path = "monday.json", "tuesday.json"
	b.Report.Summary[0].Comparisons[0].Baseline = "" // as a file of an older dbsock
	h, err := NewHosts([]HostFile{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := h.Matrices[0]
	if m.Hosts[0].Label != "db (monday.json)" || m.Hosts[1].Label != "db (tuesday.json)" {
		t.Errorf("labels %q and %q, want each with its own file", m.Hosts[0].Label, m.Hosts[1].Label)
	}
	if len(m.Rows) != 1 || m.Rows[0].Cells[1] == nil {
		t.Errorf("rows %+v: want one, a baseline left out read as TCP", m.Rows)
	}
}
