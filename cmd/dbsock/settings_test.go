package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/targets"
)

// TestTargetFlagsSetSettings: a target's flags set the fields of its
// settings, whose JSON holds the values and neither a flag nor a server's
// endpoints or password.
func TestTargetFlagsSetSettings(t *testing.T) {
	o := &runOptions{}
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.bind(f)
	args := []string{"--redis-protocol", "2", "--redis-identity", "--redis-addr", "127.0.0.1:6379", "--redis-socket", "/tmp/x.sock", "--redis-password", "s3cret",
		"--mongo-collection", "app.users", "--mysql-mode", "interpolate", "--postgres-socket-dir", "/run/postgresql"}
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, want string }{
		{"redis", `{"protocol":2,"identity":true}`},
		{"mongo", `{"op":"find","collection":"app.users"}`},
		{"mysql", `{"mode":"interpolate"}`},
		{"postgres", `{"mode":"prepared"}`},
		{"pgbouncer", `{}`},
		{"echo", `{}`},
	} {
		b, err := json.Marshal(o.settings[c.target])
		if err != nil || string(b) != c.want {
			t.Errorf("%s: settings %s (%v), want %s", c.target, b, err, c.want)
		}
	}
	if p, err := o.settings["redis"].External(); err != nil || p.TCP.Address != "127.0.0.1:6379" || p.TCP.Password != "s3cret" {
		t.Errorf("redis's server: %+v, %v; want the address and password given", p.TCP, err)
	}
}

// TestEveryTargetSettingIsWordedAsItsFlag: an error naming a field of a
// target's settings names its flag on the command line.
func TestEveryTargetSettingIsWordedAsItsFlag(t *testing.T) {
	run := newRunCmd(io.Discard, io.Discard).Flags()
	n := 0
	for _, tg := range targets.List() {
		for _, fl := range tg.Flags {
			n++
			if got := flagName(targets.Field(tg.Name, fl.Field)); got != "--"+fl.Name || run.Lookup(fl.Name) == nil {
				t.Errorf("%s's field %s is worded as %q, want --%s, a flag of dbsock run", tg.Name, fl.Field, got, fl.Name)
			}
		}
	}
	if n < 40 {
		t.Errorf("%d target flags, want every target's", n)
	}
	if got := flagName(targets.Field("redis", "NoSuchField")); got != "" {
		t.Errorf("a field no flag sets is worded as %q", got)
	}
	_, _, stderr := dbsock(t, "run", "redis", "--redis-protocol", "4")
	if !strings.Contains(stderr, "--redis-protocol 4 is not accepted; use 2 or 3") {
		t.Errorf("stderr %q, want the flag named", stderr)
	}
}
