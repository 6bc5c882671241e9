package reports

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/dbsock/dbsock/results"
)

// CSVHeader is the header row of CSV output: one row per target, scenario,
// transport, server instance and round (instance is the last column, so
// that readers of the columns before it keep working). A run of several
// client stacks (run --clients) adds a column after it, "client": the
// stack that did the run's ops (go for dbsock's own drivers).
var CSVHeader = []string{"target", "scenario", "concurrency", "value_size", "mode", "rate", "transport", "round", "n", "errors",
	"min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns", "stddev_ns",
	"ops_per_sec", "transport_verified", "incomplete", "server_product", "server_version", "instance"}

// CSV writes one row per run.
func CSV(w io.Writer, r *results.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(withClient(r, CSVHeader, "client")); err != nil {
		return err
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	for k := range r.Runs {
		run := &r.Runs[k]
		l := run.Latency
		if err := cw.Write(withClient(r, []string{run.Target, run.Scenario, strconv.Itoa(run.Concurrency), strconv.Itoa(run.ValueSize),
			run.Mode, strconv.FormatFloat(run.Rate, 'g', -1, 64), string(run.Transport), strconv.Itoa(run.Round),
			i(run.N), i(run.Errors), i(l.Min), i(l.P50), i(l.P90), i(l.P99), i(l.P999), i(l.Max), f(l.Mean), f(l.StdDev),
			f(run.OpsPerSec), strconv.FormatBool(run.TransportVerified), strconv.FormatBool(run.Incomplete),
			run.Server.Product, run.Server.Version, strconv.Itoa(instanceOf(run))}, stackOf(run))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// BlocksCSVHeader is the header row of the blocks table: one row per block,
// in the order the blocks ran within each round.
var BlocksCSVHeader = []string{"target", "scenario", "concurrency", "value_size", "mode", "rate", "transport", "round", "pair", "index",
	"start_ns", "elapsed_ns", "n", "errors", "p50_ns", "mean_ns", "p99_ns", "noisy", "instance"}

// BlocksCSV writes one row per block (format "blocks").
func BlocksCSV(w io.Writer, r *results.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(withClient(r, BlocksCSVHeader, "client")); err != nil {
		return err
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for k := range r.Runs {
		run := &r.Runs[k]
		for _, b := range results.BlocksOf(run) {
			if err := cw.Write(withClient(r, []string{run.Target, run.Scenario, strconv.Itoa(run.Concurrency), strconv.Itoa(run.ValueSize),
				run.Mode, strconv.FormatFloat(run.Rate, 'g', -1, 64), string(run.Transport), strconv.Itoa(run.Round),
				strconv.Itoa(b.Pair), strconv.Itoa(b.Index), i(b.StartNs), i(b.ElapsedNs), i(b.N), i(b.Errors), i(b.P50),
				strconv.FormatFloat(b.Mean, 'f', 1, 64), i(b.P99), strconv.FormatBool(b.Noisy), strconv.Itoa(instanceOf(run))}, stackOf(run))); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// instanceOf is the server instance a run measured: 1 in reports written
// before runs recorded it.
func instanceOf(run *results.Run) int {
	return max(run.Instance, 1)
}

// withClient is row with the client column appended, in a run of several
// client stacks; row as it is otherwise.
func withClient(r *results.Report, row []string, client string) []string {
	if len(r.Config.Clients) == 0 {
		return row
	}
	return append(row[:len(row):len(row)], client)
}

// stackOf names the client stack that did run's ops.
func stackOf(run *results.Run) string {
	if run.Stack == "" {
		return "go"
	}
	return run.Stack
}
