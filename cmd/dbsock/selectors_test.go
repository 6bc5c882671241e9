package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/supply"
)

// goSelector is a setting named as the engine names it, a Go selector
// (Plan.Loop.N, Server.CPU, redis.Settings.TLSCA, External.Endpoints):
// words for a user of the engine's packages, never for dbsock run's.
var goSelector = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\.[A-Z][A-Za-z0-9]*`)

// TestNoEngineSelectorReachesTheCommandLine: what the engine refuses, in
// each of its layers (the loop's settings, the sweep's, the plan's, the
// placement, the supply of servers and clients, a target's own settings
// and statements), reaches dbsock run's user worded with its flags and
// never naming a field as the engine does. Nothing is started: each is
// refused before, or its context is done.
func TestNoEngineSelectorReachesTheCommandLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	external := []string{"--provider", "external", "--redis-addr", "127.0.0.1:1", "--redis-socket", "/tmp/x.sock"}
	for _, args := range [][]string{
		{"echo", "--n", "0"},
		{"echo", "--warmup", "-1"},
		{"echo", "--rounds", "0"},
		{"echo", "--blocks", "20", "--n", "10"},
		{"echo", "--op-timeout", "1ns"},
		{"echo", "--instances", "0"},
		{"echo", "--concurrency", "1000000"},
		{"echo", "--keys", "pareto"},
		{"echo", "--placement", "diagonal"},
		{"echo", "--client-cpu", "a-b"},
		{"echo", "--provider", "cloud"},
		{"echo", "--paths", "tcp,tcp6"},
		{"echo", "--baseline", "tls"},
		{"echo", "--client", "container", "--client-binary", "/nonexistent/dbsock"},
		{"mysql", "--op", "mixed:95"},
		{"postgres", "--query", "UPDATE t SET n = 1 WHERE id = $1"},
		{"memcached", "--query", "set user:{key}"},
		{"redis", "--keys-from", "/etc/hostname", "--op", "update"},
		{"redis", "--redis-protocol", "4"},
		{"redis", "--provider", "compose", "--paths", "tcp,tls,unix"},
		append([]string{"redis", "--paths", "tcp,tls,unix"}, external...),
		append([]string{"redis", "--redis-tls-addr", "127.0.0.1:2"}, external...),
		append([]string{"redis", "--redis-tls-ca", "/etc/hostname"}, external...),
	} {
		var stdout, stderr bytes.Buffer
		code := Main(ctx, append([]string{"run"}, args...), &stdout, &stderr)
		if code != ExitUsage || stderr.Len() == 0 {
			t.Errorf("dbsock run %s: exit %d, stderr %q: want it refused (exit %d)", strings.Join(args, " "), code, stderr.String(), ExitUsage)
			continue
		}
		if sel := goSelector.FindString(stderr.String()); sel != "" {
			t.Errorf("dbsock run %s names %s, as the engine does:\n%s", strings.Join(args, " "), sel, stderr.String())
		}
	}
}

// TestEngineErrorsAreWordedWhereTheyAreWrapped: an engine's error, and
// its typed errors, keep the setting they name as a field however deep
// the engine wraps them (with setting.Err, a mark for errors.Is, an
// errors.Join), and dbsock run words each once, from its parts.
func TestEngineErrorsAreWordedWhereTheyAreWrapped(t *testing.T) {
	timeout := setting.Err("redis over tcp did not answer within 10s (%s)", setting.OpTimeout)
	missing := &supply.MissingEndpoint{Target: "redis", Paths: []drivers.Transport{drivers.TLS}}
	err := errors.Join(
		setting.Err("redis: %w", setting.Err("server instance %d of %d: %w", 1, 9, timeout)),
		setting.Err("%s tcp,tls,unix: the tls path cannot be measured: %w", setting.Paths, missing),
		drivers.Statementf("your %s %q: %w", setting.Queries, "GET", fmt.Errorf("wrong")),
	)
	got := inWords(err)
	for _, want := range []string{"redis: server instance 1 of 9: redis over tcp did not answer within 10s (--op-timeout)",
		"--paths tcp,tls,unix: the tls path cannot be measured: no tls endpoint was given: add --redis-tls-ca FILE",
		`your --query "GET": wrong`} {
		if !strings.Contains(got, want) {
			t.Errorf("worded:\n%s\nwant it to say %q", got, want)
		}
	}
	if sel := goSelector.FindString(got); sel != "" {
		t.Errorf("worded, it names %s:\n%s", sel, got)
	}
	if !errors.Is(err, timeout) || !errors.Is(err, drivers.ErrStatement) {
		t.Error("the engine's errors are lost to errors.Is")
	}
}
