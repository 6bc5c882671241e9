package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
	"github.com/dbsock/dbsock/supply"
)

// comparisonsJSON is what a schema version 2 report says of each case.
type comparisonsJSON struct {
	SchemaVersion int `json:"schema_version"`
	Config        struct {
		Baseline string `json:"baseline"`
	} `json:"config"`
	Summary []struct {
		Target string `json:"target"`
		Sides  []struct {
			Path string `json:"path"`
			N    int64  `json:"n"`
		} `json:"sides"`
		Comparisons []struct {
			Path         string           `json:"path"`
			Baseline     string           `json:"baseline"`
			SpeedupP50   float64          `json:"speedup_p50"`
			SpeedupP50CI *json.RawMessage `json:"speedup_p50_ci"`
			SpeedupMean  float64          `json:"speedup_mean"`
			Verdict      string           `json:"verdict"`
		} `json:"comparisons"`
	} `json:"summary"`
}

// TestComparisonsOverEveryPath: a run of redis and postgres over tcp,
// tcp6, tls and unix writes schema version 2 with one comparison per path
// but the baseline, each with its interval and verdict; --baseline tls
// compares every path with TLS instead; both reports render again and
// compare with each other.
func TestComparisonsOverEveryPath(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "initdb")
	if ok, why := supply.IPv6Loopback(); !ok {
		t.Skip(why)
	}
	dir := t.TempDir()
	files := map[string]string{}
	for _, base := range []string{"", "tls"} {
		args := []string{"run", "redis", "postgres", "--paths", "tcp,tcp6,tls,unix", "--provider", "local", "--format", "json", "--n", "600", "--instances", "1"}
		if base != "" {
			args = append(args, "--baseline", base)
		}
		code, out, stderr := dbsock(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var rep comparisonsJSON
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.SchemaVersion != 2 || rep.Config.Baseline != base || len(rep.Summary) != 2 {
			t.Fatalf("baseline %q: schema %d, config baseline %q, %d cases", base, rep.SchemaVersion, rep.Config.Baseline, len(rep.Summary))
		}
		for _, s := range rep.Summary {
			want := map[string]string{"unix": "tcp", "tcp6": "tcp", "tls": "tcp"} // path: its baseline
			if base == "tls" {
				want = map[string]string{"unix": "tls", "tcp6": "tls", "tcp": "tls"}
			}
			if len(s.Sides) != 4 || len(s.Comparisons) != 3 {
				t.Fatalf("%s: %d sides and %d comparisons, want 4 and 3", s.Target, len(s.Sides), len(s.Comparisons))
			}
			for _, c := range s.Comparisons {
				if want[c.Path] != c.Baseline || c.SpeedupP50 <= 0 || c.SpeedupMean <= 0 || c.SpeedupP50CI == nil || c.Verdict == "" {
					t.Errorf("baseline %q: %s %s: %+v", base, s.Target, c.Path, c)
				}
				delete(want, c.Path)
			}
			if len(want) != 0 {
				t.Errorf("%s: no comparison of %v", s.Target, want)
			}
		}
		files[base] = filepath.Join(dir, "r"+base+".json")
		if err := os.WriteFile(files[base], []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, md, stderr := dbsock(t, "report", files["tls"])
	if code != 0 || !strings.Contains(md, "# Unix domain socket vs TLS (127.0.0.1)") || !strings.Contains(md, "**TCP against TLS: ") {
		t.Errorf("the report of a TLS baseline: exit %d, %s\n%s", code, stderr, md)
	}
	if code, _, stderr := dbsock(t, "compare", files[""], files["tls"]); code != 0 {
		t.Errorf("compare: exit %d: %s", code, stderr)
	}
}

// TestReportAndCompareReadSchemaV1: reports written by dbsock in schema
// version 1 render with dbsock report (a run of TCP and Unix to the
// Markdown that dbsock rendered from it), and compare with dbsock compare,
// a four-path run against its version 2 form.
func TestReportAndCompareReadSchemaV1(t *testing.T) {
	testdata := filepath.Join("..", "..", "reports", "testdata")
	want, err := os.ReadFile(filepath.Join(testdata, "v1-two.md"))
	if err != nil {
		t.Fatal(err)
	}
	code, md, stderr := dbsock(t, "report", filepath.Join(testdata, "v1-two.json"))
	if code != 0 || md != string(want) {
		t.Fatalf("dbsock report of a version 1 file: exit %d, %s; Markdown differs from that dbsock's:\n%s", code, stderr, md)
	}
	v1 := filepath.Join(testdata, "v1-paths.json")
	code, js, stderr := dbsock(t, "report", v1, "--format", "json")
	if code != 0 || !strings.Contains(js, `"schema_version": 2`) {
		t.Fatalf("dbsock report --format json of a version 1 file: exit %d, %s", code, stderr)
	}
	v2 := filepath.Join(t.TempDir(), "v2.json")
	if err := os.WriteFile(v2, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := dbsock(t, "compare", v1, v2, "--fail-on-regression", "10%")
	if code != 0 || !strings.Contains(out, "| TLS over TCP |") || strings.Contains(out, "apart") {
		t.Fatalf("dbsock compare of a version 1 file and its version 2 form: exit %d, %s\n%s", code, stderr, out)
	}
}

// TestControlPathOnEveryTarget: the A/A control tcp2 (the route of tcp
// again, on connections of its own) runs on every target dbsock starts
// locally, each of its connections verified on the server side as
// 127.0.0.1 TCP, and is compared with tcp like any path; the Markdown
// labels it a control.
func TestControlPathOnEveryTarget(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "initdb")
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "memcached")
	testutil.NeedAny(t, "ferretdb")
	testutil.NeedAny(t, "pgbouncer")
	args := []string{"run", "mysql", "redis", "memcached", "mongo", "postgres", "pgbouncer", "echo", "floor", "grpc", "http", "--paths", "tcp,tcp2,unix", "--provider", "local", "--format", "json", "--n", "200", "--instances", "1", "--blocks", "5"}
	code, out, stderr := dbsock(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var rep struct {
		comparisonsJSON
		Runs []struct {
			Target    string `json:"target"`
			Transport string `json:"transport"`
			Verified  bool   `json:"transport_verified"`
			Evidence  string `json:"transport_evidence"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Summary) != 10 {
		t.Fatalf("%d cases, want one per target", len(rep.Summary))
	}
	for _, s := range rep.Summary {
		found := false
		for _, c := range s.Comparisons {
			found = found || (c.Path == "tcp2" && c.Baseline == "tcp" && c.SpeedupP50 > 0 && c.Verdict != "")
		}
		if !found {
			t.Errorf("%s: no comparison of tcp2 with tcp: %+v", s.Target, s.Comparisons)
		}
	}
	verified := map[string]bool{}
	for _, r := range rep.Runs {
		if r.Transport != "tcp2" {
			continue
		}
		if !r.Verified || !(strings.Contains(r.Evidence, "127.0.0.1") || strings.HasSuffix(r.Evidence, " on tcp")) {
			t.Errorf("%s tcp2: verified %v, evidence %q: want the server to see 127.0.0.1", r.Target, r.Verified, r.Evidence)
		}
		verified[r.Target] = true
	}
	for _, s := range rep.Summary {
		if !verified[s.Target] {
			t.Errorf("%s: no tcp2 run", s.Target)
		}
	}
	file := filepath.Join(t.TempDir(), "aa.json")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, md, stderr := dbsock(t, "report", file)
	if code != 0 || !strings.Contains(md, "TCP2 (127.0.0.1 again): A/A control") || !strings.Contains(md, "is an A/A control") {
		t.Errorf("the Markdown does not label tcp2 a control: exit %d, %s\n%s", code, stderr, md)
	}
}
