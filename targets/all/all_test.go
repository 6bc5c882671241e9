package all

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

// TestEveryTargetIsComplete checks what the CLI, providers and reports read
// from each registration, and that all targets' flags fit on one command.
func TestEveryTargetIsComplete(t *testing.T) {
	list := targets.List()
	if len(list) < 7 || len(targets.All()) == 0 {
		t.Fatalf("registered %v, all = %v", targets.Names(), targets.All())
	}
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	for _, tg := range list {
		s := tg.Settings(f) // panics on a flag registered twice
		if err := s.Validate(); err != nil {
			t.Errorf("%s: defaults do not validate: %v", tg.Name, err)
		}
		if d := s.Driver(drivers.Workload{}); d == nil || d.Name() != tg.Name || d.Describe() == "" {
			t.Errorf("%s: driver %v does not name itself after its target", tg.Name, d)
		}
		if tg.Short == "" || tg.ServedBy == "" {
			t.Errorf("%s: no Short or ServedBy for help texts", tg.Name)
		}
		if tg.Local == nil {
			t.Errorf("%s: no local recipe", tg.Name)
		}
		if c := tg.Container; c != nil && (c.Image == "" || c.Offline == "" || c.Spec == nil) {
			t.Errorf("%s: container recipe without images or spec: %+v", tg.Name, c)
		}
		if p, err := s.External(); err != nil || p.Given() {
			t.Errorf("%s: with no flags set, External() = %+v, %v", tg.Name, p, err)
		}
		if !tg.Own && f.Lookup(tg.Name+"-addr") == nil {
			t.Errorf("%s: no --%s-addr flag for servers users run", tg.Name, tg.Name)
		}
	}
}
