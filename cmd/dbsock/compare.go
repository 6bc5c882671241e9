package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/reports"
	"github.com/dbsock/dbsock/results"
)

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var failOn string
	var acrossMachines bool
	cmd := &cobra.Command{
		Use:   "compare OLD.json NEW.json [flags]",
		Short: "Show how p50, p99 and mean changed between two saved runs, and whether significantly",
		Long: `Compare reads two reports that "dbsock run --format json" wrote and shows,
per target, case and path, how p50, p99 and mean moved, with a Mann-Whitney
U test over the two runs' blocks (as benchstat tests), and each case's Unix
speedup in both runs with its 95% interval over server instances ("apart"
when the two intervals do not overlap). The interval covers what varies
within a run, not a machine's drift between runs: compare runs made at
other times before calling a difference real.

It warns when the runs were made differently (placement, CPU model or
count, kernel, virtualization, provider, client, a target's server or
image); --fail-on-regression then refuses to judge unless --across-machines
is given.`,
		Example: `  dbsock compare main.json branch.json
  dbsock compare main.json branch.json --fail-on-regression 10%`,
		Args: exactArgs(2, "OLD.json NEW.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bound := -1.0
			if failOn != "" {
				// One convention with --precision and --max-error-rate:
				// "10%", or the fraction 0.1.
				v, err := parsePercent(failOn)
				if err != nil || !(v >= 0 && v <= 1e4) || (!strings.HasSuffix(strings.TrimSpace(failOn), "%") && v > 1) {
					return usagef("--fail-on-regression %q is not a percentage such as 10%% (or the fraction 0.1)", failOn)
				}
				bound = v
			}
			old, err := readReportCtx(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			new, err := readReportCtx(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			changes := results.Changes(old, new)
			differs := reports.WorkloadDiffers(old, new)
			if differs != "" {
				fmt.Fprintf(stdout, "> **Warning:** %s.\n\n", differs)
			}
			machines := reports.RunDifferences(old, new)
			if len(machines) > 0 {
				fmt.Fprintf(stdout, "> **Warning:** the two runs differ in how they ran, which moves latency as much as a change of code does: %s.\n\n",
					strings.Join(reports.RunsDiffer(old, new), "; "))
			}
			if err := reports.CompareMarkdown(stdout, changes); err != nil {
				return err
			}
			if err := reports.SpeedupMarkdown(stdout, old, new); err != nil {
				return err
			}
			if bound < 0 {
				return nil
			}
			if refused := unalike(args, failOn, differs, machines, acrossMachines); len(refused) > 0 {
				return lines(refused) // runs made differently: nothing is judged, exit 1
			}
			return gate(old, new, args, failOn, bound, changes)
		},
	}
	cmd.Flags().BoolVar(&acrossMachines, "across-machines", false, "with --fail-on-regression, check runs that differ in placement, CPU, kernel, provider or servers (they are always warned of)")
	cmd.Flags().StringVar(&failOn, "fail-on-regression", "", "exit 4 when a p50 or mean got significantly slower by more than this, e.g. 10% (exit 1 when a case cannot be checked)")
	return cmd
}

// gate judges the changes between old and new (files args) against
// --fail-on-regression failOn, bound: exit 4 with a line per significant
// slowdown beyond it, exit 1 with a line per case that cannot be checked.
func gate(old, new *results.Report, args []string, failOn string, bound float64, changes []results.Change) error {
	regressions := unchecked(old, new, args, failOn, len(changes))
	cannot := len(regressions) // what could not be checked: exit 1
	for _, c := range results.Regressions(changes, bound) {
		regressions = append(regressions, fmt.Sprintf("%s %s %s %s is %.1f%% slower (p=%.3f), beyond --fail-on-regression %s",
			oneLine(c.Target), oneLine(c.Label()), oneLine(c.Transport.Label()), c.Metric, 100*c.Delta, c.P, failOn))
	}
	switch {
	case len(regressions) > cannot:
		return &exitError{code: ExitRegression, err: lines(regressions)}
	case len(regressions) > 0:
		return lines(regressions)
	}
	return nil
}

// unalike lists why the pair of files args cannot be judged against
// --fail-on-regression failOn at all: another workload (differs), or runs
// made differently (machines, unless acrossMachines), each difference with
// the field that holds it in each file. Such a pair is refused before any
// case is judged: its slowdowns are the machines' as much as the code's.
func unalike(args []string, failOn, differs string, machines []reports.RunDifference, acrossMachines bool) []string {
	var out []string
	if differs != "" {
		out = append(out, fmt.Sprintf("%s: --fail-on-regression %s compares only runs of one workload; no case was judged", reports.PlainText(differs), failOn))
	}
	if len(machines) == 0 || acrossMachines {
		return out
	}
	for _, d := range machines {
		out = append(out, fmt.Sprintf("the two runs differ in how they ran: %s (%s) is %s in %s and %s in %s",
			d.Field, oneLine(d.What), oneLine(d.Old), args[0], oneLine(d.New), args[1]))
	}
	return append(out, fmt.Sprintf("--fail-on-regression %s compares only runs made alike, so no case was judged; give --across-machines to compare them anyway", failOn))
}

// unchecked lists why cases of the pair old, new (files args) cannot be
// checked against --fail-on-regression failOn: a case missing from new, a
// target of new that did not finish, no case shared.
func unchecked(old, new *results.Report, args []string, failOn string, shared int) []string {
	var regressions []string
	for _, m := range results.Missing(old, new) {
		regressions = append(regressions, fmt.Sprintf("%s %s is in %s but not in %s, so it cannot be checked against --fail-on-regression %s",
			oneLine(m.Target), oneLine(m.Label()), args[0], args[1], failOn))
	}
	for _, t := range new.Targets {
		if why := new.Incomplete(t.Name); why != "" {
			regressions = append(regressions, fmt.Sprintf("%s in %s did not finish (%s), so it cannot be checked against --fail-on-regression %s",
				oneLine(t.Name), args[1], oneLine(why), failOn))
		}
	}
	if shared == 0 {
		regressions = append(regressions, fmt.Sprintf("%s and %s share no target and case, so nothing could be checked against --fail-on-regression %s", args[0], args[1], failOn))
	}
	return regressions
}

// lines is an error of one line per message (errorLines prints each).
func lines(msgs []string) error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		errs[i] = errors.New(m)
	}
	return errors.Join(errs...)
}

// oneLine is s, a string from a report file, for an error line: on one
// line, without control characters (a terminal's escape sequences).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.Join(strings.Fields(s), " "))
}
