package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/targets"
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
		Args:          rootArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newRunCmd(stdout, stderr), newReportCmd(stdout, stderr), newCompareCmd(stdout), newDoctorCmd(stdout), newCleanCmd(stdout), newTargetsCmd(stdout), newVersionCmd(stdout), newAgentCmd(), newAgentCheckCmd(stdout, stderr))
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(flagError)
	}
	return root
}

// rootArgs refuses an argument of dbsock itself, which takes a command: a
// target named where the command goes (dbsock mysql) is told the run
// that measures it.
func rootArgs(cmd *cobra.Command, args []string) error {
	if run := runOf(args); run != "" {
		return usagef("unknown command %q for %s: %s (see '%s run --help')", args[0], cmd.CommandPath(), run, cmd.CommandPath())
	}
	return noArgs(cmd, args)
}

// runOf is, when args begin with targets (or all), the run that measures
// them in words ("mysql is a target: measure it with dbsock run mysql");
// "" otherwise.
func runOf(args []string) string {
	var names []string
	for _, a := range args {
		if _, ok := targets.Lookup(a); !ok && a != "all" {
			break
		}
		names = append(names, a)
	}
	switch {
	case len(names) == 0:
		return ""
	case len(names) == 1 && names[0] == "all":
		return "all stands for every target: measure them with dbsock run all"
	case len(names) == 1:
		return fmt.Sprintf("%s is a target: measure it with dbsock run %s", names[0], names[0])
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	return fmt.Sprintf("%s are targets: measure them with dbsock run %s", list, strings.Join(names, " "))
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
