package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/compose"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/pipeline"
	"github.com/dbsock/dbsock/targets"
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
	if o.client != "container" {
		return nil
	}
	netns := slices.Contains(o.paths, string(drivers.Service)) || slices.Contains(o.paths, string(drivers.Pod))
	return func(ctx context.Context, target string, dirs []string) (pipeline.Remote, error) {
		return compose.StartClient(ctx, compose.ClientOptions{Binary: o.clientBinary, Dirs: dirs, CPUs: cpus, Target: target, EnterNetns: netns})
	}
}

// endpointFlags are the parts of a target's flag names that give the
// endpoints of a server the user runs: the client container is handed the
// endpoints themselves, never these (nor a password).
var endpointFlags = []string{"-addr", "-socket", "-socket-dir", "-user", "-password", "-password-file", "-db"}

// targetFlags lists, per target, the target's own flags the user gave, as
// --name=value arguments, for the client container to read the same
// driver settings from.
func (o *runOptions) targetFlags(names []string) map[string][]string {
	out := map[string][]string{}
	for _, name := range names {
		t, _ := targets.Lookup(name)
		own := pflag.NewFlagSet(name, pflag.ContinueOnError)
		t.Settings(own)
		own.VisitAll(func(fl *pflag.Flag) {
			given := o.flags.Lookup(fl.Name)
			if given == nil || !given.Changed {
				return
			}
			for _, suffix := range endpointFlags {
				if strings.HasSuffix(fl.Name, suffix) {
					return
				}
			}
			values := []string{given.Value.String()}
			if sv, ok := given.Value.(pflag.SliceValue); ok {
				values = sv.GetSlice()
			}
			for _, v := range values {
				out[name] = append(out[name], "--"+fl.Name+"="+v)
			}
		})
	}
	return out
}
