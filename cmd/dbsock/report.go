package main

import (
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
			rep, err := readReport(args[0])
			if err != nil {
				return err
			}
			return writeOutputs(rep, outs, plot, stdout, stderr)
		},
	}
	out.bind(cmd.Flags())
	return cmd
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
