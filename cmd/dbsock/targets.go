package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

func newTargetsCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "targets",
		Short: "List the targets and what one operation on each measures",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TARGET\tONE OPERATION\tSERVER")
			for _, t := range targets.List() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Settings().Driver(drivers.Workload{}).Describe(), t.ServedBy)
			}
			fmt.Fprintf(tw, "all\t%s\t\n", strings.Join(targets.All(), ", "))
			return tw.Flush()
		},
	}
}
