package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dbsock/dbsock/agents/goagent"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/sysinfo"
	"github.com/dbsock/dbsock/targets"
)

// newAgentCmd is "dbsock agent TARGET": dbsock's own Go drivers behind the
// agent protocol on stdin and stdout (package goagent), the process dbsock
// run talks to in its client container (--client container), and an agent
// like any other (--clients cmd:'dbsock agent').
func newAgentCmd() *cobra.Command {
	var settings string
	var valueSize int
	var wait bool
	cmd := &cobra.Command{
		Use:    "agent [--settings JSON] [--value-size N] TARGET",
		Short:  "Serve dbsock's own Go client as an agent on stdin and stdout (docs/agents.md)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait {
				awaitEOF(cmd.Context(), cmd.InOrStdin())
				return nil
			}
			if len(args) != 1 {
				return usagef("dbsock agent takes one target, as dbsock run gives it")
			}
			d, lib, err := agentDriver(args[0], settings, valueSize)
			if err != nil {
				return usagef("%s", inWords(err))
			}
			targets.Quiet()
			a, err := goagent.New(d, lib, sysinfo.Collect([]string{lib}).Drivers[lib])
			if err != nil {
				return usagef("%s", err)
			}
			return a.Serve(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&settings, "settings", "", "the target's settings as JSON, as dbsock run gives them (no secret)")
	cmd.Flags().IntVar(&valueSize, "value-size", 0, "the size of the values the rows hold (0: the target's default)")
	cmd.Flags().BoolVar(&wait, "wait", false, "idle until stdin ends or it is stopped (the client container's first process, whose stdin the dbsock that started it holds)")
	return cmd
}

// awaitEOF returns when r ends or ctx is done. The client container's
// first process (dbsock agent --wait) reads its stdin, which the dbsock
// that started the container holds: when that dbsock is gone, killed
// outright too, the engine closes it, and the container ends.
func awaitEOF(ctx context.Context, r io.Reader) {
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r)
		close(ended)
	}()
	select {
	case <-ctx.Done():
	case <-ended:
	}
}

// agentDriver is target's driver under settings (JSON: its Settings
// value, unknown fields refused; "" for its defaults), and its client
// library's module path.
func agentDriver(target, settings string, valueSize int) (drivers.Driver, string, error) {
	t, ok := targets.Lookup(target)
	if !ok {
		return nil, "", fmt.Errorf("dbsock agent: no target %q (dbsock targets lists them)", target)
	}
	s := t.Settings()
	if settings != "" {
		dec := json.NewDecoder(bytes.NewReader([]byte(settings)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(s); err != nil {
			return nil, "", fmt.Errorf("dbsock agent: read %s's settings %s: %w", target, settings, err)
		}
	}
	if err := s.Validate(); err != nil {
		return nil, "", fmt.Errorf("dbsock agent: %s's settings: %w", target, err)
	}
	if valueSize < 0 {
		return nil, "", fmt.Errorf("dbsock agent: --value-size %d is negative", valueSize)
	}
	return s.Driver(drivers.Workload{ValueSize: valueSize}), t.Library, nil
}
