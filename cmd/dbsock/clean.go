package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/supply"
)

func newCleanCmd(stdout io.Writer) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "clean [flags]",
		Short: "Remove servers, containers and temp dirs left by dbsock runs that were killed",
		Long: `A dbsock run removes everything it started, even on Ctrl-C. Only a run killed
outright (SIGKILL, power loss) can leave a temp dir behind, and, if dbsock's
own death did not take them along, its server processes; a run with
containers has its reaper remove them and its temp dir then, unless the
reaper was killed too. Clean finds the
dbsock-* temp dirs and the containers and networks whose dbsock is gone,
kills the processes using the dirs and removes them all, and ends the
client stacks' agents of runs that are over (marked DBSOCK_AGENT_OF in
their environment) and removes the CA files agents left in the temp dir
(dbsock-ca-*, 10 minutes old, when no run with agents is going). Runs in progress
are left alone, and so is what a run in a PID namespace clean cannot see
left (a run in another container): clean says so, and where to run it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return clean(cmd.Context(), stdout, dryRun) },
	}
	cmd.Flags().BoolVarP(&dryRun, "dry-run", "n", false, "only list what would be removed")
	return cmd
}

// cleanAgents ends the agents' processes of runs that are over and removes
// the CA files agents left (when no run with agents is going), or says it
// would; found says whether there was any.
func cleanAgents(ctx context.Context, stdout io.Writer, socket string, dryRun bool) (found bool, err error) {
	left, live := agents.FindLeftovers(ctx, socket)
	var errs []error
	for _, l := range left {
		verb := "ended"
		if dryRun {
			verb = "would end"
		} else if err := l.End(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "%s agent process %d (%s; its run is over: %s)\n", verb, l.PID, l.Command, l.Why)
	}
	dirs := []string{os.TempDir()}
	if os.TempDir() != "/tmp" {
		dirs = append(dirs, "/tmp")
	}
	var cas []string
	for _, d := range dirs {
		cas = append(cas, agents.LeftoverCAFiles(d)...)
	}
	if live && len(cas) > 0 {
		fmt.Fprintf(stdout, "left alone: %d CA files agents wrote (%s), while a run with agents is going\n", len(cas), cas[0])
		return len(left) > 0, errors.Join(errs...)
	}
	for _, f := range cas {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		} else if err := os.Remove(f); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "%s %s (a CA file an agent wrote, left when it was killed while it opened a connection)\n", verb, f)
	}
	return len(left) > 0 || len(cas) > 0, errors.Join(errs...)
}

// clean is dbsock clean: it removes (or, dryRun, lists) what runs that
// are over left.
func clean(ctx context.Context, stdout io.Writer, dryRun bool) error {
	socket := supply.DockerSocket()
	containers, kept, err := supply.FindLeftoverContainers(ctx, socket)
	if err != nil {
		return err
	}
	// A killed run's temp dir is where its containers' socket
	// directories are: under TMPDIR, /tmp, or, for a run inside a
	// container, the directory it shared with the host.
	bases := []string{os.TempDir()}
	for _, c := range containers {
		if c.RunDir != "" {
			bases = append(bases, filepath.Dir(c.RunDir))
		}
	}
	left, keptDirs, err := supply.FindLeftovers(ctx, socket, bases...)
	if err != nil {
		return err
	}
	for _, k := range append(kept, keptDirs...) {
		fmt.Fprintf(stdout, "left alone: %s, whose dbsock cannot be shown to have ended: %s\n", k.What, k.Why)
	}
	tags := supply.DeadRunTags(ctx, socket)
	agentsLeft, agentErr := cleanAgents(ctx, stdout, socket, dryRun)
	if len(left) == 0 && len(containers) == 0 && len(tags) == 0 && !agentsLeft {
		fmt.Fprintln(stdout, "nothing to clean")
		return nil
	}
	errs := []error{agentErr}
	for _, tag := range tags {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		} else {
			supply.RemoveTag(ctx, socket, tag)
		}
		fmt.Fprintf(stdout, "%s image tag %s (the client image's tag of a run that is over)\n", verb, tag)
	}
	for _, c := range containers {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		} else if err := c.Remove(ctx, socket); err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Network {
			fmt.Fprintf(stdout, "%s network %.12s (%s; %s)\n", verb, c.ID, c.Target, c.Why)
			continue
		}
		fmt.Fprintf(stdout, "%s container %.12s (%s, image %s; %s)\n", verb, c.ID, c.Target, c.Image, c.Why)
	}
	for _, l := range left {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		} else if err := l.Clean(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "%s %s (%s; server pids %v)\n", verb, l.Dir, l.Why, l.PIDs)
	}
	return errors.Join(errs...)
}
