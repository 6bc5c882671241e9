package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/dbsock/dbsock/results"
)

// BenchFmt writes the runs in the Go benchmark text format, one line per
// run, with the target and transport as sub-benchmark keys, so that
//
//	benchstat -col /transport results.txt
//
// compares TCP with Unix, and benchstat old.txt new.txt compares two runs.
// Rounds are repeated lines, which benchstat treats as samples.
func BenchFmt(w io.Writer, r *results.Report) error {
	b := &strings.Builder{}
	e := r.Environment
	fmt.Fprintf(b, "goos: %s\ngoarch: %s\n", e.OS, e.Arch)
	if e.CPUModel != "" {
		fmt.Fprintf(b, "cpu: %s\n", e.CPUModel)
	}
	fmt.Fprintf(b, "pkg: dbsock\ndbsock-version: %s\nplacement: %s client=%s server=%s\n",
		r.Tool.Version, r.Config.Placement.Mode, orDash(r.Config.Placement.ClientCPUs), orDash(r.Config.Placement.ServerCPUs))
	for _, t := range r.Targets {
		if t.Server.Product != "" {
			fmt.Fprintf(b, "server-%s: %s\n", t.Name, t.Server)
		}
	}
	for _, run := range r.Runs {
		if run.Incomplete || run.N-run.Errors <= 0 {
			continue
		}
		l := run.Latency
		fmt.Fprintf(b, "Benchmark%s/target=%s%s/transport=%s %d %.1f ns/op %d p50-ns %d p99-ns %d p999-ns %.0f ops/s\n",
			benchName(run.Scenario), run.Target, caseKeys(run.Case), run.Transport, run.N-run.Errors, l.Mean, l.P50, l.P99, l.P999, run.OpsPerSec)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// caseKeys renders the case's sweep dimensions as sub-benchmark keys.
func caseKeys(c results.Case) string {
	s := fmt.Sprintf("/conc=%d/size=%d", max(c.Concurrency, 1), c.ValueSize)
	if c.Mode != "" {
		s += "/mode=" + c.Mode
	}
	if c.Rate > 0 {
		s += fmt.Sprintf("/rate=%g", c.Rate)
	}
	return s
}

// benchName turns a scenario name such as "pk" into "PK", "connect" into
// "Connect".
func benchName(scenario string) string {
	if len(scenario) <= 2 {
		return strings.ToUpper(scenario)
	}
	rs := []rune(scenario)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}
