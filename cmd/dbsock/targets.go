package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/internal/runner"
)

// servedBy says what serves each target.
var servedBy = map[string]string{
	"mysql":    "MySQL (mysqld) or MariaDB (mariadbd), local, container or yours",
	"redis":    "redis-server, local, container or yours",
	"mongo":    "mongod, or FerretDB (MongoDB wire protocol), local, container or yours",
	"postgres": "PostgreSQL, local, container or yours",
	"echo":     "dbsock's echo server in a child process: the transport floor",
	"grpc":     "dbsock's gRPC health server (grpc-go) in a child process",
	"http":     "dbsock's HTTP/1.1 server (net/http) in a child process",
}

func newTargetsCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "targets",
		Short: "List the targets and what one operation on each measures",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TARGET\tONE OPERATION\tSERVER")
			for _, t := range runner.Targets {
				d, _ := runner.Driver(t, runner.DriverOptions{}, 0)
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t, d.Describe(), servedBy[t])
			}
			fmt.Fprintf(tw, "all\tmysql, redis and mongo\t\n")
			return tw.Flush()
		},
	}
}
