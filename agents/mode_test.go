package agents

import (
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// goMode is a target driver with the mode of Go's (go-redis speaks RESP3).
type goMode struct {
	drivers.Driver
	mode string
}

func (g goMode) Mode() string { return g.mode }

// An agent's case names the mode its own library used, as its hello said
// (redis-py, node-redis, phpredis and hiredis speak RESP2), never the Go
// driver's; a hello that says none gets ModeNotSaid; a target without
// modes has none.
func TestModeIsTheAgentsOwn(t *testing.T) {
	for _, c := range []struct {
		goMode    string
		hello     Hello
		noPrepare bool
		want      string
	}{
		{"resp3", Hello{Library: "redis-py", Mode: "resp2"}, false, "resp2"},
		{"resp3", Hello{Library: "yours"}, false, ModeNotSaid},
		{"prepared", Hello{Library: "psycopg2", Mode: "prepared", UnpreparedMode: "interpolate"}, false, "prepared"},
		{"exec", Hello{Library: "psycopg2", Mode: "prepared", UnpreparedMode: "interpolate"}, true, "interpolate"},
		{"interpolate", Hello{Library: "libmariadb", Mode: "prepared"}, true, "prepared"},
		{"", Hello{Library: "pymemcache"}, false, ""},
	} {
		d := &Driver{Driver: goMode{mode: c.goMode}, agent: &Agent{hello: c.hello}, lookup: drivers.AgentLookup{NoPrepare: c.noPrepare}}
		if got := d.Mode(); got != c.want {
			t.Errorf("Go's %q, hello %+v, no_prepare %v: mode %q, want %q", c.goMode, c.hello, c.noPrepare, got, c.want)
		}
		if got := d.Timed().Mode(); got != c.want {
			t.Errorf("timed: Go's %q, hello %+v: mode %q, want %q", c.goMode, c.hello, got, c.want)
		}
	}
}
