package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock/internal/testutil"
)

var setnameCalls = regexp.MustCompile(`(?m)^cmdstat_client\|setname:calls=(\d+),`)

// TestConnectOpsOpenUnnamed: in the connect scenario, every stack's agent
// (and dbsock's own) opens each op's connection as an application does,
// unnamed: the token, which costs Redis a round trip (CLIENT SETNAME), is
// said only by the connections dbsock verifies, one per path and stack,
// and not by the 2 x 44 connections each stack opens to time its ops.
func TestConnectOpsOpenUnnamed(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	needStacks(t)
	srv := startLocal(t, "redis")
	pwFile := filepath.Join(t.TempDir(), "redis.pw")
	if err := os.WriteFile(pwFile, []byte(srv.TCP().Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stacks := []string{"c", "python", "node", "php", "ruby", "cmd:" + staticDbsock(t) + " agent"}
	for _, stack := range stacks {
		before := setnames(t, srv.Unix().Address, srv.TCP().Password)
		code, _, stderr := dbsock(t, "run", "redis", "--provider", "external", "--redis-addr", srv.TCP().Address,
			"--redis-socket", srv.Unix().Address, "--redis-password-file", pwFile, "--clients", stack, "--scenario", "connect",
			"--paths", "tcp,unix", "--n", "40", "--blocks", "2", "--instances", "1", "--rounds", "1", "--warmup", "4", "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", stack, code, stderr)
		}
		// One verified connection per path; a stack that named each op's
		// connection would add 2 x (40 + 4).
		if got := setnames(t, srv.Unix().Address, srv.TCP().Password) - before; got < 1 || got > 4 {
			t.Errorf("%s: CLIENT SETNAME called %d times over 88 connect ops on 2 paths; want one per verified connection (2)", stack, got)
		}
	}
}

// setnames is the server's count of CLIENT SETNAME calls.
func setnames(t *testing.T, socket, password string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: socket, Password: password, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := setnameCalls.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
