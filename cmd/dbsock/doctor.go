package main

import (
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/doctor"
	"github.com/dbsock/dbsock/targets"
)

func newDoctorCmd(stdout io.Writer) *cobra.Command {
	var o doctor.Options
	cmd := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "Find database sockets, check you can connect, and see whether Docker can serve dbsock",
		Long: `Doctor looks for database sockets at the usual paths and among listening
Unix sockets, and for each says whether you may connect (and if not, which
permission is missing where), what answers there, and how clients read
"localhost" for it. It also says whether the Docker engine is reachable,
rootless or Docker Desktop, and whether host networking is possible.

It knows the sockets of ` + doctorNames() + `.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Timeout < time.Millisecond || o.Timeout > time.Hour {
				return usagef("--timeout %s is out of range; accepted: 1ms to 1h", o.Timeout)
			}
			o.Kinds = targets.DoctorKinds()
			return doctor.Report(cmd.Context(), stdout, o)
		},
	}
	cmd.Flags().StringArrayVar(&o.Extra, "socket", nil, "also look at this socket path (repeatable)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 2*time.Second, "how long each probe may take")
	return cmd
}

// doctorNames lists the database families doctor knows, as "a, b and c".
func doctorNames() string {
	var names []string
	for _, k := range targets.DoctorKinds() {
		names = append(names, k.Name)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
