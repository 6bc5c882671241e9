package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/results"
)

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var out outputOptions
	cmd := &cobra.Command{
		Use:   "report RESULTS.json [flags]",
		Short: "Render saved JSON results again, without re-running",
		Long: `Report reads the JSON that "dbsock run --format json" wrote and renders it
again in any format. The Markdown it writes is byte for byte what the run
itself wrote.`,
		Example: `  dbsock run redis --out r.json
  dbsock report r.json --out r.md --out r.csv`,
		Args: exactArgs(1, "RESULTS.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			outs, plot, err := out.resolve()
			if err != nil {
				return err
			}
			rep, err := readReportCtx(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return writeOutputs(cmd.Context(), rep, outs, plot, stdout, stderr)
		},
	}
	out.bind(cmd.Flags())
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

// exactArgs wants exactly n positional arguments, named for the message.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s; got %d argument(s) (see '%s --help')", cmd.CommandPath(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}
