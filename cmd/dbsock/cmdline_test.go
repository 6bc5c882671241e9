package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// planLine runs dbsock run with args through planning only (nothing
// starts) and returns its exit status and stderr.
func planLine(t *testing.T, args ...string) (int, string) {
	t.Helper()
	old := execRun
	execRun = planOnly
	defer func() { execRun = old }()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"run"}, args...), &out, &errb)
	return code, errb.String()
}

// oneUsageLine fails t unless code and stderr are a usage error (exit 2)
// of one line holding want.
func oneUsageLine(t *testing.T, what string, code int, stderr, want string) {
	t.Helper()
	if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", what, code, stderr, want)
	}
}

// TestClientsCommandValue: a cmd: entry of --clients takes the rest of
// the flag's value, quotes and commas and all, after the stacks before
// it; --clients repeats.
func TestClientsCommandValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--clients", `cmd:/usr/bin/python3 "/tmp/x.py"`}, []string{`cmd:/usr/bin/python3 "/tmp/x.py"`}},
		{[]string{"--clients", "go,cmd:/usr/bin/python3 /tmp/x.py --a=1,2"}, []string{"go", "cmd:/usr/bin/python3 /tmp/x.py --a=1,2"}},
		{[]string{"--clients", "go, python:psycopg", "--clients", "cmd:a,b"}, []string{"go", "python:psycopg", "cmd:a,b"}},
		{nil, []string{"go"}},
	} {
		o := &runOptions{}
		f := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.bind(f)
		if err := f.Parse(tc.args); err != nil || !slices.Equal(o.client.stacks, tc.want) {
			t.Errorf("%q: stacks %q (%v); want %q", tc.args, o.client.stacks, err, tc.want)
		}
	}
}

// TestClientsCommandPlanned: --clients cmd: with a quoted path and with
// commas is accepted; a command that cannot be run (its executable
// missing, after a comment; unbalanced quotes; empty) is refused before
// anything starts, on one line.
func TestClientsCommandPlanned(t *testing.T) {
	agent := filepath.Join(t.TempDir(), "my agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{`cmd:/bin/sh "` + agent + `"`, "cmd:/bin/sh '" + agent + "' --a=1,2", "cmd:true;"} {
		if code, stderr := planLine(t, "redis", "--provider", "local", "--clients", cmd); code != ExitOK {
			t.Errorf("--clients %q: exit %d, %q; want it accepted", cmd, code, stderr)
		}
	}
	for _, tc := range []struct{ cmd, want string }{
		{"cmd:agent #", `--clients "cmd:agent #" cannot be run: agent is not an executable found on PATH`},
		{`cmd:/usr/bin/python3 "/tmp/x.py`, "the shell cannot read it"},
		{"cmd:cd /tmp && ./agent", `write "$1" where the target goes`},
		{"go,cmd: ", "give your agent's command after cmd:"},
	} {
		code, stderr := planLine(t, "redis", "--provider", "local", "--clients", tc.cmd)
		oneUsageLine(t, tc.cmd, code, stderr, tc.want)
	}
}

// TestThresholdNamesCmdStack: a threshold names a cmd: agent's case as
// TARGET@cmd; one naming a stack the run does not measure is refused
// before anything starts, with the nearest name.
func TestThresholdNamesCmdStack(t *testing.T) {
	if code, stderr := planLine(t, "redis", "--provider", "local", "--clients", "go,cmd:/bin/cat", "--threshold", "redis@cmd.unix_speedup_p50>=1"); code != ExitOK {
		t.Errorf("redis@cmd: exit %d, %q; want it accepted", code, stderr)
	}
	code, stderr := planLine(t, "redis", "--provider", "local", "--clients", "go,cmd:/bin/cat", "--threshold", "redis@cmd2.unix_speedup_p50>=1")
	oneUsageLine(t, "redis@cmd2", code, stderr, `names client stack cmd2, which this run does not measure (did you mean cmd?): its stacks are go, cmd`)
}

// TestPathsEmptyRefused: --paths "" names no path: it is refused, as
// --clients "" is, rather than run as the default.
func TestPathsEmptyRefused(t *testing.T) {
	code, stderr := planLine(t, "redis", "--provider", "local", "--paths", "")
	oneUsageLine(t, `--paths ""`, code, stderr, `--paths "" names no path`)
}

// TestNewcomerErrors: every reason a --paths cannot be measured at once;
// a count such as 10k taken, and what --n takes said when it is not one;
// a mistyped target, path, subcommand or flag gets the nearest name; a
// target given as a command is told the run that measures it.
func TestNewcomerErrors(t *testing.T) {
	code, stderr := planLine(t, "redis", "--provider", "local", "--paths", "tcp,published")
	oneUsageLine(t, "tcp,published", code, stderr, "add the one that is missing")
	if !strings.Contains(stderr, "the published path cannot be measured: only the docker and compose providers serve it") {
		t.Errorf("--paths tcp,published --provider local: %q does not say that published needs docker", stderr)
	}
	for _, n := range []string{"10k", "1e4", "10_000"} {
		o := &runOptions{}
		f := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.bind(f)
		if err := f.Parse([]string{"--n", n}); err != nil || o.loop.n != 10000 {
			t.Errorf("--n %s: %d, %v; want 10000", n, o.loop.n, err)
		}
	}
	code, stderr = planLine(t, "redis", "--n", "10x")
	oneUsageLine(t, "--n 10x", code, stderr, `--n "10x" is not a whole number such as 3000, 10k, 2M or 1e4`)
	if strings.Contains(stderr, "strconv") {
		t.Errorf("--n 10x: %q quotes Go's parser", stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "reddis"}, `unknown target "reddis" (did you mean redis?)`},
		{[]string{"run", "redis", "--paths", "tcp,unxi"}, `"unxi" is not a path; use tcp, unix, tcp6, tls, published, bridge, service, pod, tcp2, tcp-tcp or unix-tcp (did you mean unix?)`},
		{[]string{"run", "redis", "--paths", "tcp,unix,tcp-tcp"}, "--paths tcp,unix,tcp-tcp: the tcp-tcp path runs through a hop in front of the server, and no target of this run has one; use --via (pgbouncer in front of postgres, haproxy in front of redis or mysql, twemproxy in front of redis) or leave tcp-tcp out"},
		{[]string{"run", "pgbouncer", "--provider", "compose", "--paths", "tcp,unix,unix-tcp"}, "--paths tcp,unix,unix-tcp with --provider compose: the unix-tcp path is served by a hop dbsock starts, on this host or in a container of its own; add --provider local (or docker) or leave unix-tcp out"},
		{[]string{"run", "redis", "--via", "pgbouncer"}, "--via pgbouncer stands in front of postgres only, not redis; run postgres with it"},
		{[]string{"run", "postgres", "--via", "haproxy"}, "--via haproxy stands in front of redis or mysql only, not postgres; run redis or mysql with it"},
		{[]string{"run", "twemproxy-redis", "redis"}, "twemproxy-redis is measured over its hop's routes only (its leg to the server is never the server's socket); run it apart from redis: dbsock run redis --via twemproxy"},
		{[]string{"run", "redis", "--via", "envoy"}, `--via "envoy" is not a hop dbsock can put in front of a server; the hops: pgbouncer in front of postgres, haproxy in front of redis or mysql, twemproxy in front of redis`},
		{[]string{"run", "postgres", "--via", "pgbouncer", "--provider", "compose"}, "--via pgbouncer with --provider compose: dbsock measures the legs of a pgbouncer it starts, on this host or in a container of its own; use --provider local or docker"},
		{[]string{"run", "redis", "--via", "haproxy", "--provider", "compose"}, "--via haproxy with --provider compose: dbsock measures the legs of a haproxy it starts, on this host or in a container of its own; use --provider local or docker"},
		{[]string{"runn", "redis"}, `unknown command "runn" (did you mean run?)`},
		{[]string{"mysql"}, `unknown command "mysql" for dbsock: mysql is a target: measure it with dbsock run mysql`},
		{[]string{"mysql", "redis", "--n", "10"}, "mysql and redis are targets: measure them with dbsock run mysql redis"},
		{[]string{"all"}, "all stands for every target: measure them with dbsock run all"},
		{[]string{"run", "redis", "--instance", "6"}, "unknown flag: --instance (did you mean --instances?)"},
	} {
		code, _, stderr := dbsock(t, tc.args...)
		oneUsageLine(t, strings.Join(tc.args, " "), code, stderr, tc.want)
	}
}

// TestInstancesTooFewWarned: a run of fewer server instances than an
// interval needs says so before anything starts, naming the flag; the
// default and one instance do not.
func TestInstancesTooFewWarned(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{[]string{"--instances", "2"}, true}, {[]string{"--instances", "5"}, true}, {nil, false}, {[]string{"--instances", "1"}, false}} {
		o := &runOptions{}
		f := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.bind(f)
		if err := f.Parse(append([]string{"--provider", "local"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		plan, provider, err := o.plan([]string{"redis"})
		if err != nil {
			t.Fatal(err)
		}
		provider.Close()
		w := plan.InstancesWarning().In(flagName)
		if got := strings.Contains(w, "needs 6 or more") && strings.Contains(w, "give --instances 6 or more"); got != tc.want {
			t.Errorf("%q: warning %q; want one: %v", tc.args, w, tc.want)
		}
	}
}
