package yourquery

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/dbsocktest"
)

// TestBenchstatColumns runs this module's benchmarks briefly and reads them
// through benchstat -col /transport: one table, a tcp and a unix column,
// a row per benchmark with a time in each.
func TestBenchstatColumns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmarks")
	}
	benchstat, err := exec.LookPath("benchstat")
	if err != nil {
		if os.Getenv(dbsocktest.RequireEnv) != "" {
			t.Fatal("benchstat is not installed (scripts/install-deps.sh --with-browser installs it)")
		}
		t.Skip(err)
	}
	bench := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchtime", "300x", "-count", "4", "./...")
	out, err := bench.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -bench: %v\n%s", err, out)
	}
	cmd := exec.Command(benchstat, "-col", "/transport", "-")
	cmd.Stdin = bytes.NewReader(out)
	table, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, table)
	}
	header, rows := "", map[string][]string{}
	for _, line := range strings.Split(string(table), "\n") {
		f := strings.Fields(strings.ReplaceAll(line, "│", " "))
		switch {
		case header == "" && len(f) == 2 && f[0] == "tcp" && f[1] == "unix":
			header = line
		case header != "" && len(f) > 0 && (strings.HasPrefix(f[0], "OrderLookup") || strings.HasPrefix(f[0], "SessionGet") || strings.HasPrefix(f[0], "ProductGet")):
			if _, seen := rows[f[0]]; !seen {
				rows[f[0]] = f[1:]
			}
		}
	}
	if header == "" || len(rows) != 3 {
		t.Fatalf("no tcp and unix columns with a row per benchmark in:\n%s", table)
	}
	for name, cells := range rows {
		if len(cells) < 4 || !strings.HasSuffix(cells[0], "µ") && !strings.HasSuffix(cells[0], "m") {
			t.Errorf("%s: cells %q, want a time for tcp and one for unix", name, cells)
		}
	}
	t.Logf("\n%s", table)
}
