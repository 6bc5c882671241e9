package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/dbsock/dbsock/results"
)

// BenchFmt writes the runs in the Go benchmark text format, one line per
// block, with the target and transport as sub-benchmark keys, so that
//
//	benchstat -col /transport results.txt
//
// compares TCP with Unix, and benchstat old.txt new.txt compares two runs.
// Blocks are repeated lines, which benchstat treats as samples (30 per
// case and transport by default). A run without blocks (an older report)
// is one line.
func BenchFmt(w io.Writer, r *results.Report) error {
	b := &strings.Builder{}
	e := r.Environment
	fmt.Fprintf(b, "goos: %s\ngoarch: %s\n", benchValue(e.OS), benchValue(e.Arch))
	if e.CPUModel != "" {
		fmt.Fprintf(b, "cpu: %s\n", benchValue(e.CPUModel))
	}
	fmt.Fprintf(b, "pkg: dbsock\ndbsock-version: %s\nplacement: %s\n",
		benchValue(r.Tool.Version), benchValue(fmt.Sprintf("%s client=%s server=%s", r.Config.Placement.Mode, orNotPinned(r.Config.Placement.ClientCPUs), orNotPinned(r.Config.Placement.ServerCPUs))))
	for _, t := range r.Targets {
		if t.Server.Product != "" {
			fmt.Fprintf(b, "server-%s: %s\n", benchKey(t.Name), benchValue(t.Server.String()))
		}
	}
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Incomplete {
			continue
		}
		for _, blk := range results.BlocksOf(run) {
			ok := blk.N - blk.Errors
			if ok <= 0 || blk.ElapsedNs <= 0 {
				continue
			}
			fmt.Fprintf(b, "Benchmark%s/target=%s%s/transport=%s %d %.1f ns/op %d p50-ns %d p99-ns %.0f ops/s\n",
				benchName(run.Scenario), benchKey(run.Target), caseKeys(run.Case), benchKey(string(run.Transport)), ok, blk.Mean, blk.P50, blk.P99,
				float64(ok)/(float64(blk.ElapsedNs)/1e9))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// caseKeys renders the case's sweep dimensions as sub-benchmark keys.
func caseKeys(c results.Case) string {
	s := fmt.Sprintf("/conc=%d/size=%d", max(c.Concurrency, 1), c.ValueSize)
	if c.Mode != "" {
		s += "/mode=" + benchKey(c.Mode)
	}
	if c.Rate > 0 {
		s += fmt.Sprintf("/rate=%g", c.Rate)
	}
	if c.Pipeline > 1 {
		s += fmt.Sprintf("/pipeline=%d", c.Pipeline)
	}
	return s
}

// benchKey is s as a part of a benchmark name or a configuration key:
// what would end the name or the key, or start another part (a space or
// other blank, a control character, /, =, :), becomes _.
func benchKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' || r == '=' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// benchValue is s as a configuration value: one line, without control
// characters.
func benchValue(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.Join(strings.Fields(s), " "))
}

// benchName turns a scenario name such as "pk" into "PK", "connect" into
// "Connect".
func benchName(scenario string) string {
	scenario = benchKey(scenario)
	if len(scenario) <= 2 {
		return strings.ToUpper(scenario)
	}
	rs := []rune(scenario)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}
