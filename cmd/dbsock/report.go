package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
)

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var out outputOptions
	var by []string
	cmd := &cobra.Command{
		Use:   "report RESULTS.json|DIR... [flags]",
		Short: "Render saved JSON results again, or several hosts' results side by side",
		Long: `Report reads the JSON that "dbsock run --format json" wrote and renders it
again in any format. The Markdown it writes is byte for byte what the run
itself wrote.

Given several files or a directory (whose .json files it reads: a
directory of one file too), it sets them side by side: a row per case and
pair of paths, a column per host (each file's --host), each cell that
host's own paired comparison (its speedup, interval and verdict, never a
ratio of two hosts' latencies), then the host facts, those that differ
marked. Files measured differently
(` + reports.MethodFieldNames() + `) are refused, or grouped with --by.
Files run with --explain add each host's layers under the matrix, and
for each host the layer whose move from the first host's accounts for
most of the change in the speedup. Several files are written as
Markdown, JSON or CSV, and --plot FILE.png draws each host's speedups.`,
		Example: `  dbsock run redis --out r.json
  dbsock report r.json --out r.md --out r.csv
  dbsock report a.json b.json --plot hosts.png
  dbsock report results/ --by scenario --out hosts.md`,
		Args: minArgs(1, "RESULTS.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			outs, plot, err := out.resolve()
			if err != nil {
				return err
			}
			if err := reports.CheckBy(by); err != nil {
				return usagef("--by %v", err)
			}
			files := args
			// A directory is a fleet's files: its matrix, even of one
			// host (a fleet of one node), so that what reads the
			// report reads one format whatever the fleet's size.
			st, err := os.Stat(args[0])
			fleet := err == nil && st.IsDir()
			if len(args) > 1 || fleet {
				if files, err = resultFiles(args); err != nil {
					return err
				}
			}
			if len(files) > 1 || fleet {
				return reportHosts(cmd.Context(), files, by, outs, plot, stdout, stderr)
			}
			rep, err := readReportCtx(cmd.Context(), files[0])
			if err != nil {
				return err
			}
			return writeOutputs(cmd.Context(), rep, outs, plot, stdout, stderr)
		},
	}
	out.bind(cmd.Flags())
	cmd.Flags().StringSliceVar(&by, "by", nil, "with several files: group them by these fields, a matrix per group, instead of refusing files measured differently: "+reports.MethodFieldNames())
	return cmd
}

// readReportCtx is readReport that an interrupt cuts short: opening a FIFO
// nobody writes to blocks in the kernel, where no signal handler reaches.
func readReportCtx(ctx context.Context, path string) (*results.Report, error) {
	type read struct {
		rep *results.Report
		err error
	}
	done := make(chan read, 1)
	go func() {
		rep, err := readReport(path)
		done <- read{rep, err}
	}()
	select {
	case r := <-done:
		return r.rep, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("interrupted while reading %s (a FIFO waits for a writer): %w", path, ctx.Err())
	}
}

// readReport loads a saved JSON report.
func readReport(path string) (*results.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("read results %s: %v", path, err)
	}
	defer f.Close()
	rep, err := results.ReadJSON(f)
	if err != nil {
		return nil, usagef("read results %s: %v (was it written by dbsock run --format json?)", path, err)
	}
	return rep, nil
}

// minArgs wants n or more positional arguments, named for the message.
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s takes %s; got %d argument(s) (see '%s --help')", cmd.CommandPath(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// exactArgs wants exactly n positional arguments, named for the message.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s; got %d argument(s) (see '%s --help')", cmd.CommandPath(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}
