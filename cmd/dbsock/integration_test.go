package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/testutil"

	"github.com/dbsock/dbsock/results"
)

// TestRunAllTargetsLocal runs every target over both transports against
// real servers started by the local provider, then checks the JSON contract
// and that no server process or temp dir is left.
func TestRunAllTargetsLocal(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "mongod", "ferretdb")
	tmp := shortTempDir(t)
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "r.json")

	code, stdout, stderr := dbsock(t, "run", "all", "echo", "--n", "300", "--warmup", "30", "--instances", "1", "--rounds", "2",
		"--provider", "local", "--format", "json", "--out", out)
	if code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Fatalf("with --out, stdout should be empty; got %q", stdout)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}

	products := map[string][]string{"mysql": {"MariaDB", "MySQL"}, "redis": {"Redis"}, "mongo": {"FerretDB", "MongoDB"}, "echo": {"dbsock echo server"}}
	if len(rep.Targets) != 4 {
		t.Fatalf("got %d targets, want 4", len(rep.Targets))
	}
	for _, target := range rep.Targets {
		if target.Error != "" {
			t.Errorf("%s: %s", target.Name, target.Error)
		}
		if !contains(products[target.Name], target.Server.Product) {
			t.Errorf("%s: server product %q, want one of %v", target.Name, target.Server.Product, products[target.Name])
		}
		// FerretDB reads one document whatever --rows says, and says why.
		if target.Server.Product == "FerretDB" && (len(target.Warnings) == 0 || !strings.Contains(target.Warnings[0].String(), "read one document")) {
			t.Errorf("mongo on FerretDB: warnings %q, want why it read one document", target.Warnings)
		}
	}
	for _, run := range rep.Runs {
		want := map[string]bool{"mysql": true, "redis": true} // 10,000 rows: hundreds of distinct ones per 300 ops
		if run.Target == "mongo" && run.DistinctKeys != 1 || want[run.Target] && run.DistinctKeys < 250 {
			t.Errorf("%s %s round %d read %d distinct rows", run.Target, run.Transport, run.Round, run.DistinctKeys)
		}
	}
	seen := map[string]int{}
	for _, run := range rep.Runs {
		key := run.Target + "/" + string(run.Transport)
		seen[key]++
		if !run.TransportVerified || run.Errors != 0 || run.N != 300 || run.Incomplete {
			t.Errorf("%s round %d: verified=%v errors=%d n=%d incomplete=%v %s", key, run.Round, run.TransportVerified, run.Errors, run.N, run.Incomplete, run.Error)
		}
		l := run.Latency
		if l.Min <= 0 || l.P50 < l.Min || l.P99 < l.P50 || l.Max < l.P999 || l.Mean <= 0 || run.OpsPerSec <= 0 {
			t.Errorf("%s round %d: implausible latency %+v ops/s %v", key, run.Round, l, run.OpsPerSec)
		}
		if run.Endpoint.Transport != run.Transport {
			t.Errorf("%s: endpoint network %s", key, run.Endpoint.Transport)
		}
		if run.Transport == drivers.TCP && !strings.HasPrefix(run.Endpoint.Address, "127.0.0.1:") {
			t.Errorf("%s: TCP endpoint %s is not loopback", key, run.Endpoint.Address)
		}
		if run.Transport == drivers.Unix && !strings.HasPrefix(run.Endpoint.Address, tmp+"/dbsock-") {
			t.Errorf("%s: socket %s is not in the run's temp dir under %s", key, run.Endpoint.Address, tmp)
		}
	}
	for _, target := range []string{"mysql", "redis", "mongo", "echo"} {
		for _, tr := range drivers.Transports {
			if n := seen[target+"/"+string(tr)]; n != 2 {
				t.Errorf("%s/%s: %d runs, want one per round (2)", target, tr, n)
			}
		}
	}
	if len(rep.Summary) != 4 {
		t.Fatalf("got %d summaries, want 4", len(rep.Summary))
	}
	for _, s := range rep.Summary {
		if s.Against(drivers.Unix).SpeedupP50 <= 0 || s.Against(drivers.Unix).SpeedupMean <= 0 || s.Side(drivers.TCP).N != 600 || s.Side(drivers.Unix).N != 600 {
			t.Errorf("summary %s: %+v", s.Target, s)
		}
	}
	raw, _ := os.ReadFile(out)
	for _, target := range rep.Targets {
		for _, ep := range target.Endpoints {
			if ep.Password != "" {
				t.Fatal("endpoint password survived JSON decoding")
			}
		}
	}
	if strings.Contains(string(raw), "\"password\":") { // the key; "mysql_native_password" is a value, has_password a flag
		t.Errorf("the JSON has a password field")
	}

	if kids := testutil.Children(t); len(kids) != 0 {
		t.Errorf("server processes left running: %v", kids)
	}
	if dirs := testutil.TempDirs(t, tmp); len(dirs) != 0 {
		t.Errorf("temp dirs left: %v", dirs)
	}
}

// TestRunEchoMarkdown checks the default output: Markdown on stdout with a
// table row per transport and the speedup line.
func TestRunEchoMarkdown(t *testing.T) {
	code, stdout, stderr := dbsock(t, "run", "echo", "--n", "200", "--warmup", "10", "--instances", "1", "--rounds", "1", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("--quiet printed on stderr: %q", stderr)
	}
	for _, want := range []string{"# Unix domain socket vs TCP on 127.0.0.1", "## echo", "| TCP | 200 | 0 |", "| Unix | 200 | 0 |", "Unix speedup (TCP/Unix, paired block by block):", "Verified TCP: echo server sees tcp", "Verified Unix: echo server sees unix", "## Environment"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestRunExternalRedis measures a server dbsock did not start: a local
// provider server stands in for one the user already runs.
func TestRunExternalRedis(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	srv := startLocal(t, "redis")
	pwFile := filepath.Join(t.TempDir(), "redis.pw")
	if err := os.WriteFile(pwFile, []byte(srv.TCP().Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := dbsock(t, "run", "redis", "--provider", "external", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1",
		"--redis-addr", srv.TCP().Address, "--redis-socket", srv.Unix().Address, "--redis-password-file", pwFile, "--format", "json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, srv.TCP().Password) {
		t.Fatal("the report contains the password")
	}
	if !strings.Contains(stdout, `"provider": "external"`) || strings.Count(stdout, `"transport_verified": true`) != 2 {
		t.Fatalf("report:\n%s", stdout)
	}
}

// TestRunFailsWithWrongPassword: a run that cannot connect exits 1, says
// what it tried, and never prints the password.
func TestRunFailsWithWrongPassword(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	srv := startLocal(t, "redis")
	t.Setenv("DBSOCK_REDIS_PASSWORD", "wrong-password-1234")
	code, stdout, stderr := dbsock(t, "run", "redis", "--provider", "external", "--n", "10",
		"--redis-addr", srv.TCP().Address, "--redis-socket", srv.Unix().Address, "-q")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitFailed, stderr)
	}
	if strings.Contains(stderr+stdout, "wrong-password-1234") || strings.Contains(stderr+stdout, srv.TCP().Password) {
		t.Fatal("a password was printed")
	}
	if !strings.Contains(stderr, "connect to redis over tcp "+srv.TCP().Address) {
		t.Fatalf("stderr does not say what was attempted: %s", stderr)
	}
	if !strings.Contains(stdout, "**Incomplete:**") {
		t.Fatalf("the partial report does not mark the target incomplete:\n%s", stdout)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestOutputsAndReport writes every format in one run, then checks that
// "dbsock report" reproduces the Markdown byte for byte from the JSON.
func TestOutputsAndReport(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	code, stdout, stderr := dbsock(t, "run", "echo", "--n", "200", "--warmup", "10", "--instances", "2", "-q",
		"--out", p("r.json"), "--out", p("r.md"), "--out", p("r.csv"), "--out", p("r.txt")+":benchfmt", "--plot", p("r.svg"))
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	md, err := os.ReadFile(p("r.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "](r.svg)") {
		t.Errorf("the Markdown does not link the plot:\n%s", md)
	}
	for name, want := range map[string]string{"r.svg": "<svg", "r.json": `"schema_version": 2`, "r.csv": "target,scenario,concurrency,value_size,mode,rate,transport,round", "r.txt": "BenchmarkPK/target=echo/conc=1/size=4/transport=unix"} {
		b, err := os.ReadFile(p(name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v; want it to contain %q", name, err, want)
		}
	}
	t.Chdir(dir) // the Markdown links the plot relative to itself
	code, again, stderr := dbsock(t, "report", p("r.json"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if again != string(md) {
		t.Fatalf("dbsock report did not reproduce r.md:\n--- run ---\n%s\n--- report ---\n%s", md, again)
	}
	code, _, stderr = dbsock(t, "report", p("missing.json"))
	if code != ExitUsage || !strings.Contains(stderr, "missing.json") {
		t.Fatalf("missing file: exit %d, %q", code, stderr)
	}
}

// TestThresholds: a violated threshold exits 3 (the run itself finished)
// and names itself; a satisfied one exits 0.
func TestThresholds(t *testing.T) {
	code, _, stderr := dbsock(t, "run", "echo", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1", "-q", "--threshold", "echo.unix.p50<1ns")
	if code != ExitThreshold || !strings.Contains(stderr, "threshold echo.unix.p50<1ns violated: p50 ") {
		t.Fatalf("violated: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := dbsock(t, "run", "echo", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1", "-q", "--threshold", "echo.unix.p50<10s", "--format", "json")
	if code != 0 || !strings.Contains(stdout, `"ok": true`) {
		t.Fatalf("satisfied: exit %d, stderr %q", code, stderr)
	}
}

// TestCompareSavedRuns compares a saved run with itself: no change, exit 0,
// even with a strict --fail-on-regression.
func TestCompareSavedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.json")
	if code, _, stderr := dbsock(t, "run", "echo", "--n", "200", "--warmup", "10", "-q", "--out", path); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	code, stdout, stderr := dbsock(t, "compare", path, path, "--fail-on-regression", "0%")
	if code != 0 || !strings.Contains(stdout, "| echo | pk, 4 B values | Unix | p50 |") || !strings.Contains(stdout, "+0.0%") {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "| target | case | old Unix speedup (p50, 95% CI) | new | intervals |") || !strings.Contains(stdout, "| echo | pk, 4 B values | ") {
		t.Fatalf("compare shows no speedup row:\n%s", stdout)
	}
	for _, bad := range []string{"lots", "NaN", "Inf%", "-1%"} {
		code, _, stderr = dbsock(t, "compare", path, path, "--fail-on-regression", bad)
		if code != ExitUsage || !strings.Contains(stderr, "is not a percentage") {
			t.Fatalf("bad bound %q: exit %d %q", bad, code, stderr)
		}
	}
	// One convention for shares: "10%" or the fraction 0.1; a bare 10 is
	// neither.
	if code, _, stderr = dbsock(t, "compare", path, path, "--fail-on-regression", "10"); code != ExitUsage || !strings.Contains(stderr, "or the fraction 0.1") {
		t.Fatalf("a bare 10: exit %d %q", code, stderr)
	}
	if code, _, stderr = dbsock(t, "compare", path, path, "--fail-on-regression", "0.1"); code != 0 {
		t.Fatalf("0.1 (10%%): exit %d %q", code, stderr)
	}
	// A new report without the old one's target cannot pass a gate.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "b.json")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(string(b), `"echo"`, `"http"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = dbsock(t, "compare", path, other, "--fail-on-regression", "10%")
	if code != ExitFailed || !strings.Contains(stderr, "echo pk, 4 B values is in") || !strings.Contains(stderr, "share no target") {
		t.Fatalf("disjoint reports: exit %d, stderr %q; want 1, the missing case and that none is shared", code, stderr)
	}
	if code, _, _ = dbsock(t, "compare", path, other); code != 0 {
		t.Fatalf("without a gate, disjoint reports are only shown: exit %d", code)
	}
	// A new report whose target did not finish cannot pass a gate either,
	// whatever its figures say.
	rep, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	rep.Targets[0].Error = "echo over unix /x stopped after 100 of 200 ops: the server did not answer"
	failed := writeReport(t, rep, "c.json")
	code, _, stderr = dbsock(t, "compare", path, failed, "--fail-on-regression", "10%")
	if code != ExitFailed || !strings.Contains(stderr, "echo in "+failed+" did not finish") {
		t.Fatalf("a run that did not finish: exit %d, stderr %q; want 1 saying so", code, stderr)
	}
	// A real regression exits 4: every block twice as slow.
	rep.Targets[0].Error = ""
	for i := range rep.Runs {
		for j := range rep.Runs[i].Blocks {
			b := &rep.Runs[i].Blocks[j]
			b.P50, b.P99, b.Mean = 2*b.P50, 2*b.P99, 2*b.Mean
		}
	}
	for i := range rep.Summary {
		for j := range rep.Summary[i].Sides {
			l := &rep.Summary[i].Sides[j].Latency
			l.P50, l.P99, l.Mean = 2*l.P50, 2*l.P99, 2*l.Mean
		}
	}
	slower := writeReport(t, rep, "d.json")
	code, _, stderr = dbsock(t, "compare", path, slower, "--fail-on-regression", "10%")
	if code != ExitRegression || !strings.Contains(stderr, "beyond --fail-on-regression 10%") {
		t.Fatalf("twice as slow: exit %d, stderr %q; want %d naming the regression", code, stderr, ExitRegression)
	}
	// Runs made differently (another placement, another CPU count) are
	// warned of, refused by the gate, and checked when told to.
	if rep, err = readReport(path); err != nil {
		t.Fatal(err)
	}
	rep.Config.Placement.Mode, rep.Config.Placement.ServerCPUs = "split", "1"
	rep.Environment.NumCPU++
	moved := writeReport(t, rep, "e.json")
	code, stdout, stderr = dbsock(t, "compare", path, moved)
	if code != 0 || !strings.Contains(stdout, "> **Warning:** the two runs differ in how they ran") || !strings.Contains(stdout, "against split (client CPU") ||
		!strings.Contains(stdout, "logical CPUs") {
		t.Fatalf("another placement: exit %d, stdout %q; want a warning naming the placement and the CPU count", code, stdout)
	}
	code, _, stderr = dbsock(t, "compare", path, moved, "--fail-on-regression", "10%")
	if code != ExitFailed || !strings.Contains(stderr, "give --across-machines to compare them anyway") {
		t.Fatalf("another placement under a gate: exit %d, stderr %q; want 1 and the way to go on", code, stderr)
	}
	if code, _, stderr = dbsock(t, "compare", path, moved, "--fail-on-regression", "10%", "--across-machines"); code != 0 {
		t.Fatalf("another placement with --across-machines: exit %d, %q", code, stderr)
	}
}

// writeReport writes rep as JSON to a file called name in a temp dir and
// returns its path.
func writeReport(t *testing.T, rep *results.Report, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := rep.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWithoutPATH: with no PATH at all (a bare cron or systemd unit),
// dbsock still finds the servers, their tools and taskset where packages
// put them.
func TestWithoutPATH(t *testing.T) {
	testutil.NeedAny(t, "mariadbd")
	testutil.NeedAny(t, "redis-server")
	bin := buildDbsock(t)
	cmd := exec.Command(bin, "run", "mysql", "redis", "--placement", "shared", "--provider", "local", "--n", "100", "--warmup", "10", "--instances", "1", "--rounds", "1", "-q")
	cmd.Env = []string{"HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "| mysql | MariaDB") || !strings.Contains(string(out), "| redis | Redis") {
		t.Fatalf("without PATH: %v\n%s", err, out)
	}
}

// TestInstancesRestartLocalServers runs five targets with three server
// instances each: every server is really restarted, twice (a new process,
// the same endpoints; memcached's two processes, and PgBouncer with the
// PostgreSQL behind it, together), and every instance is verified on both
// transports like the first. The interval over instances (6 or more) is
// pipeline's TestInstancesRestartTheServerAndGiveTheInterval.
func TestInstancesRestartLocalServers(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	testutil.NeedAny(t, "redis-server")
	testutil.NeedAny(t, "postgres")
	testutil.NeedAny(t, "memcached")
	testutil.NeedAny(t, "pgbouncer")
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := dbsock(t, "run", "mysql", "redis", "postgres", "memcached", "pgbouncer", "--instances", "3", "--n", "200", "--warmup", "20", "--blocks", "6",
		"--provider", "local", "--format", "json", "--out", out)
	if code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"mysql", "redis", "postgres", "memcached", "pgbouncer"} {
		m := regexp.MustCompile(target + `: server instance 3 of 3 ready in \S+ \(pid (\d+), was (\d+)\)`).FindStringSubmatch(stderr)
		if m == nil || m[1] == m[2] {
			t.Errorf("%s: no restart into a new process in the log (%q):\n%s", target, m, stderr)
		}
		byInstance := map[int]int{}
		for _, run := range rep.Runs {
			if run.Target != target {
				continue
			}
			byInstance[run.Instance]++
			if !run.TransportVerified || run.Errors != 0 || run.N != 200 {
				t.Errorf("%s instance %d %s: verified=%v errors=%d n=%d %s", target, run.Instance, run.Transport, run.TransportVerified, run.Errors, run.N, run.Error)
			}
		}
		if byInstance[1] != 2 || byInstance[2] != 2 || byInstance[3] != 2 || len(byInstance) != 3 {
			t.Errorf("%s: runs by instance %v, want TCP and Unix in instances 1 to 3", target, byInstance)
		}
	}
	for _, s := range rep.Summary {
		if len(s.Against(drivers.Unix).InstanceSpeedups) != 3 {
			t.Errorf("%s: instance speedups %v, want one per instance", s.Target, s.Against(drivers.Unix).InstanceSpeedups)
		}
	}
	if rep.Config.Instances != 3 || rep.Config.Rounds != 1 {
		t.Errorf("config: %d instances of %d rounds, want 3 of 1", rep.Config.Instances, rep.Config.Rounds)
	}
}
