package all

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/targets"
)

// TestEveryTargetIsComplete checks what the CLI, providers and reports read
// from each registration, that all targets' flags fit on one command, and
// that each target's settings go through JSON and back as they are.
func TestEveryTargetIsComplete(t *testing.T) {
	list := targets.List()
	if len(list) < 7 || len(targets.All()) == 0 {
		t.Fatalf("registered %v, all = %v", targets.Names(), targets.All())
	}
	flags := map[string]string{}
	for _, tg := range list {
		for _, fl := range tg.Flags {
			if other, dup := flags[fl.Name]; dup {
				t.Errorf("--%s is a flag of both %s and %s", fl.Name, other, tg.Name)
			}
			flags[fl.Name] = tg.Name
		}
		s := tg.Settings()
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("%s: settings as JSON: %v", tg.Name, err)
		}
		back := tg.Settings()
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		err = dec.Decode(back)
		again, _ := json.Marshal(back)
		if err != nil || !bytes.Equal(again, b) || bytes.Contains(b, []byte("--")) {
			t.Errorf("%s: settings %s decode to %s (%v)", tg.Name, b, again, err)
		}
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
		// A hop of several targets (haproxy in front of redis, of mysql)
		// measures the hop dbsock starts only: its legs are known there.
		if _, ok := flags[tg.Name+"-addr"]; !tg.Own && tg.Via == "" && !ok {
			t.Errorf("%s: no --%s-addr flag for servers users run", tg.Name, tg.Name)
		}
	}
}
