package main

import (
	"context"
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/supply"
)

// newMeasureCmd is "dbsock measure", which dbsock runs in its client
// container (--client container): it runs one case file's timing loop
// and writes the runs beside it. With --wait it idles until stopped (the
// container's first process).
func newMeasureCmd() *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:    "measure CASE-FILE",
		Short:  "Run one case of dbsock run --client container (dbsock runs this in its client container)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait {
				<-cmd.Context().Done()
				return nil
			}
			if len(args) != 1 {
				return usagef("dbsock measure takes one case file, as dbsock run --client container writes it")
			}
			err := pipeline.ServeCase(cmd.Context(), args[0])
			if errors.Is(err, pipeline.ErrBadCase) {
				return usagef("%s", inWords(err))
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "idle until stopped (the client container's first process)")
	return cmd
}

// Places for --client.
var clientPlaces = []string{"host", "container"}

// remoteClient is the plan's Client for --client container: one client
// container per target, pinned where the client would be.
func (o *runOptions) remoteClient(cpus []int) pipeline.StartRemote {
	if o.client.place != "container" {
		return nil
	}
	netns := slices.ContainsFunc(o.paths, func(t string) bool { return drivers.Transport(t).Info().Netns })
	return func(ctx context.Context, target string, dirs []string) (pipeline.Remote, error) {
		return supply.StartClient(ctx, supply.ClientOptions{Binary: o.client.binary, Dirs: dirs, CPUs: cpus, Target: target, EnterNetns: netns})
	}
}
