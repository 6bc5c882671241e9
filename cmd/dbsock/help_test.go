package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/targets"
)

// TestHelpReadsEachTargetsSyntax: --query, --keys-from, --op and
// --pipeline list what each target registers (its Help), targets that
// write it alike together, and nothing for a target that registers none.
func TestHelpReadsEachTargetsSyntax(t *testing.T) {
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&workloadOptions{}).bind(f)
	(&sweepOptions{}).bind(f)
	for flag, of := range map[string]func(targets.Help) string{
		"query":     func(h targets.Help) string { return h.Query },
		"keys-from": func(h targets.Help) string { return h.KeysQuery },
		"op":        func(h targets.Help) string { return h.Update },
		"pipeline":  func(h targets.Help) string { return h.Pipeline },
	} {
		usage := f.Lookup(flag).Usage
		for _, tg := range targets.List() {
			text := of(tg.Help)
			if text == "" {
				if strings.Contains(usage, tg.Name+":") || strings.Contains(usage, tg.Name+",") {
					t.Errorf("--%s's help names %s, which registers nothing for it: %s", flag, tg.Name, usage)
				}
				continue
			}
			if !strings.Contains(usage, text) {
				t.Errorf("--%s's help lacks %s's %q: %s", flag, tg.Name, text, usage)
			}
		}
	}
	if u := f.Lookup("query").Usage; !strings.Contains(u, "postgres, pgbouncer: SQL with $1") {
		t.Errorf("--query's help does not list postgres and pgbouncer together: %s", u)
	}
}
