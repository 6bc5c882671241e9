package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// flags names each of the engine's settings by the flag of dbsock run that
// sets it: the engine's errors name fields (Plan.Loop.N), the command line
// words them as its flags (--n).
var flags = map[setting.Field]string{
	setting.N: "--n", setting.Warmup: "--warmup", setting.Rounds: "--rounds", setting.Blocks: "--blocks",
	setting.Duration: "--duration", setting.Rate: "--rate", setting.Precision: "--precision",
	setting.MaxDuration: "--max-duration", setting.OpTimeout: "--op-timeout", setting.Rows: "--rows",
	setting.Keys: "--keys", setting.Op: "--op", setting.Scenario: "--scenario", setting.Concurrency: "--concurrency",
	setting.ValueSizes: "--value-size", setting.Pipelines: "--pipeline", setting.Instances: "--instances",
	setting.Provider: "--provider", setting.Thresholds: "--threshold", setting.Queries: "--query",
	setting.KeysFrom: "--keys-from", setting.AllowWrites: "--allow-writes", setting.Explain: "--explain",
	setting.MaxErrors: "--max-error-rate", setting.Placement: "--placement", setting.ClientCPU: "--client-cpu",
	setting.ServerCPU: "--server-cpu", setting.ServerPID: "--server-pid", setting.FailFast: "--fail-fast",
	setting.Seed: "--seed", setting.Client: "--client", setting.Paths: "--paths", setting.Baseline: "--baseline", setting.Clients: "--clients", setting.ClientBinary: "--client-binary",
}

// flagName is the flag that sets f: one of run's own, or one of a
// target's (its settings' fields, targets.Field).
func flagName(f setting.Field) string {
	if name, ok := flags[f]; ok {
		return name
	}
	return settingFlag(f)
}

// inWords is err worded for the command line: the settings it names as
// flags, and the supply layer's typed errors in the flags' terms.
func inWords(err error) string {
	return setting.In(err, flagName, setting.As(missingFlags))
}

// missingFlags words a missing endpoint of a server the user runs with
// the flags that give it.
func missingFlags(m *supply.MissingEndpoint) string {
	flag := func(field string) string {
		f := targets.Field(m.Target, field)
		return cmp.Or(flagName(f), string(f))
	}
	var paths, add []string
	for _, p := range m.Paths {
		paths = append(paths, string(p))
		switch {
		case p.Info().TLS:
			add = append(add, fmt.Sprintf("%s FILE (or %s), and %s where TLS listens on another port", flag("TLSCA"), flag("TLSInsecure"), flag("TLSAddr")))
		case p.Network() == "unix":
			add = append(add, flag("Socket"))
		default:
			add = append(add, flag("Addr"))
		}
	}
	return fmt.Sprintf("no %s endpoint was given: add %s", strings.Join(paths, " or "), strings.Join(add, " and "))
}
