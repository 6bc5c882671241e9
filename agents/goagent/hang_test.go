package goagent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/agents/goagent"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	_ "github.com/dbsock/dbsock/targets/all"
	"github.com/dbsock/dbsock/targets/targettest"
)

// TestOpOnAHungServer: dbsock's agent bounds an op on a server that
// stopped answering (SIGSTOP) by the open's op_timeout_ms, on an open
// connection (its watchdog closes the socket under the client library,
// whose own read timeout is 10 s for go-redis) and in the connect
// scenario (each op's open and lookup under the timeout): the block
// returns with each op's error saying so, and the agent goes on.
func TestOpOnAHungServer(t *testing.T) {
	for _, tt := range []struct{ target, binary string }{{"redis", "redis-server"}, {"memcached", "memcached"}} {
		t.Run(tt.target, func(t *testing.T) {
			srv := targettest.Local(t, tt.target, tt.binary)
			d := targettest.Lookup(t, tt.target).Settings().Driver(drivers.Workload{})
			a, err := goagent.New(d, "lib", "v1")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			go func() { _ = a.Serve(ctx, inR, outW); outW.Close() }()
			defer inW.Close()
			answers := make(chan map[string]any, 8)
			go func() {
				sc := bufio.NewScanner(outR)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var m map[string]any
					if json.Unmarshal(sc.Bytes(), &m) == nil {
						answers <- m
					}
				}
				close(answers)
			}()
			next := func(what string) map[string]any {
				t.Helper()
				select {
				case m, ok := <-answers:
					if !ok {
						t.Fatalf("the agent ended before %s", what)
					}
					return m
				case <-time.After(30 * time.Second):
					t.Fatalf("no %s within 30 s: the agent hangs", what)
				}
				return nil
			}
			ask := func(m map[string]any) {
				b, _ := json.Marshal(m)
				if _, err := inW.Write(append(b, '\n')); err != nil {
					t.Fatal(err)
				}
			}
			if m := next("hello"); m["type"] != agents.TypeHello {
				t.Fatalf("first answer %v, want the hello", m)
			}
			// Over TCP: dbsock's memcached serves its socket from a process
			// of its own.
			ep := srv.TCP()
			host, p, _ := net.SplitHostPort(ep.Address)
			port, _ := strconv.Atoi(p)
			ask(map[string]any{"type": "open", "id": "a", "target": tt.target, "path": "tcp", "network": "tcp", "address": ep.Address, "host": host, "port": port,
				"user": ep.User, "password": ep.Password, "token": "hangtest", "op_timeout_ms": 500})
			if m := next("opened"); m["type"] != agents.TypeOpened {
				t.Fatalf("open: %v", m)
			}
			pids, _ := cpustat.Descendants(srv.PID)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGSTOP)
			}
			waitStopped(t, pids)
			defer func() {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGCONT)
				}
			}()
			key := d.(drivers.AgentOp).AgentOp().Key(1)
			for _, scenario := range []string{"", "connect"} {
				start := time.Now()
				ask(map[string]any{"type": "block", "id": "a", "keys": []any{key, key}, "value_length": d.ValueSize(), "scenario": scenario})
				m := next("block_result (scenario " + scenario + ")")
				errs, _ := m["errors"].([]any)
				t.Logf("scenario %q: block_result %s after it was asked: %v", scenario, time.Since(start).Round(time.Millisecond), m["errors"])
				if m["type"] != agents.TypeBlockResult || len(errs) != 2 {
					t.Fatalf("scenario %q: %v; want a block_result with both ops failed", scenario, m)
				}
				for _, e := range errs {
					if msg, _ := e.(map[string]any)["message"].(string); !strings.Contains(msg, "no answer within 500ms (the op timeout)") {
						t.Errorf("scenario %q: op error %q does not say the op timed out", scenario, msg)
					}
				}
				// Two ops, each bounded by 500 ms: not the client library's
				// own 10 s (a bound, not a speed goal).
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("scenario %q: the block took %s on a hung server; its 2 ops should end by their 500ms op timeout", scenario, took.Round(time.Millisecond))
				}
			}
		})
	}
}

// waitStopped waits (up to 10 s) until every one of pids is stopped: a
// SIGSTOP takes effect a moment after kill returns.
func waitStopped(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		for i := 0; ; i++ {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				break // gone
			}
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "T" {
				break
			}
			if i == 1000 {
				t.Fatalf("process %d is not stopped 10 s after SIGSTOP", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
