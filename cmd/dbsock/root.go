package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/internal/sysinfo"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dbsock",
		Short: "Compare database client latency over a Unix domain socket and over TCP on 127.0.0.1",
		Long: `dbsock issues primary-key lookups against real database servers, once over
127.0.0.1 TCP and once over the server's Unix domain socket, and reports
the latency of both side by side.

Its servers: ` + doctorNames() + `;
dbsock targets lists what it measures of each.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newRunCmd(stdout, stderr), newReportCmd(stdout, stderr), newCompareCmd(stdout), newDoctorCmd(stdout), newCleanCmd(stdout), newTargetsCmd(stdout), newVersionCmd(stdout), newAgentCmd())
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(flagError)
	}
	return root
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		return usagef("%s for %s (see '%s --help')", unknownWord("command", args[0], names), cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print dbsock's version, commit and Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			t := sysinfo.Self()
			line := "dbsock " + t.Version
			if t.Commit != "" {
				line += " (" + t.Commit + ")"
			}
			_, err := fmt.Fprintf(stdout, "%s %s %s/%s\n", line, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// oneOf validates a string flag against its accepted values.
func oneOf(flag, value string, accepted ...string) error {
	for _, a := range accepted {
		if value == a {
			return nil
		}
	}
	return usagef("--%s %q is not accepted; use one of: %s", flag, value, strings.Join(accepted, ", "))
}

// intRange validates an integer flag.
func intRange(name string, value, min, max int) error {
	if value < min || value > max {
		return usagef("--%s %d is out of range; accepted: %d to %d", name, value, min, max)
	}
	return nil
}
