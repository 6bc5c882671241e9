package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestRedisPipelineOfYourCommand: --pipeline with your own Redis command
// pipelines that command, where it used to index dbsock's own key names,
// which a --query run never makes (a panic).
func TestRedisPipelineOfYourCommand(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	for _, args := range [][]string{
		{"--query", "STRLEN dbsock:user:{key}"},
		{"--query", "SMEMBERS dbsock:nokey:{key}"}, // an empty reply: an error, not a panic
	} {
		if args[1] == "SMEMBERS dbsock:nokey:{key}" {
			code, _, stderr := dbsock(t, append([]string{"run", "redis", "--provider", "local", "--pipeline", "16", "--n", "200",
				"--instances", "1", "--rounds", "1", "--warmup", "10", "-q"}, args...)...)
			if code == 0 || !strings.Contains(stderr, "returned nothing") {
				t.Errorf("%v: exit %d, %s; want the query refused for returning nothing", args, code, stderr)
			}
			continue
		}
		rep := runJSON(t, append([]string{"run", "redis", "--provider", "local", "--pipeline", "16", "--n", "200",
			"--instances", "1", "--rounds", "1", "--warmup", "10"}, args...)...)
		for _, r := range rep.Runs {
			if r.Errors != 0 || r.N != 200 || !r.TransportVerified || r.Pipeline != 16 {
				t.Errorf("%v over %s: %d ops, %d errors, verified %v, pipeline %d", args, r.Transport, r.N, r.Errors, r.TransportVerified, r.Pipeline)
			}
		}
	}
}

// TestMeasureRefusesWhatIsNotACase: dbsock measure checks a case file
// before it removes it (it holds passwords, so it is removed once read):
// a README, an empty file, [], null, a FIFO, an out file elsewhere, an
// endpoint off loopback, an unknown op, the case's old form, negative
// counts and settings beyond dbsock run's limits (N, rounds, rate, op
// timeout, precision, mix, keys, rows, workers, depth, value size, paths,
// memory) are refused with exit 2 and one line, and the file is
// left where it was.
func TestMeasureRefusesWhatIsNotACase(t *testing.T) {
	dir := t.TempDir()
	good := func(f string) map[string]any {
		return map[string]any{"target": "redis", "out": f + ".out",
			"paths":     []any{map[string]any{"network": "tcp", "address": "127.0.0.1:6379"}, map[string]any{"network": "unix", "address": "/tmp/r.sock"}},
			"passwords": []string{"", ""},
			"loop":      map[string]any{"n": 10, "rounds": 1},
			"case":      map[string]any{"rows": 10}}
	}
	with := func(key string, v any) func(string) any {
		return func(f string) any { c := good(f); c[key] = v; return c }
	}
	loop := func(kv ...any) map[string]any {
		m := map[string]any{"n": 10, "rounds": 1}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	// Each is refused for its own reason, which the line says.
	cases := map[string]struct {
		mk   func(string) any
		want string
	}{
		"readme":   {func(string) any { return "# dbsock\n" }, "invalid character"},
		"empty":    {func(string) any { return "" }, "EOF"},
		"array":    {func(string) any { return "[]" }, "cannot unmarshal array"},
		"null":     {func(string) any { return "null" }, "no target"},
		"out":      {with("out", filepath.Join(dir, "elsewhere")), "its out file"},
		"remote":   {with("paths", []any{map[string]any{"network": "tcp", "address": "192.0.2.1:6379"}, map[string]any{"network": "unix", "address": "/tmp/r.sock"}}), "is not a loopback address"},
		"op":       {with("loop", loop("op", "drop")), `"drop" is not accepted`},
		"old form": {with("options", map[string]any{"N": 10, "Rounds": 1}), `unknown field "options"`},
		"negative": {with("loop", loop("n", -5)), "-5 is out of range"},
		// dbsock run's own limits, checked by the same rules.
		"n absurd":      {with("loop", loop("n", 1e12)), "out of range"},
		"rounds absurd": {with("loop", loop("rounds", 1e6)), "out of range"},
		"rate absurd":   {with("loop", loop("rate", 1e12)), "accepted: more than 0 up to"},
		"rate too slow": {with("loop", loop("rate", 1e-9)), "between one worker's ops"},
		"no timeout":    {with("loop", loop("op_timeout_ns", 1)), "accepted: 10ms to 1h"},
		"precision":     {with("loop", loop("precision", 0.9, "max_duration_ns", 1e9)), "is not a share from 0.1% to 50%"},
		"mix absurd":    {with("loop", loop("op", "mixed", "mix", map[string]any{"reads": 2e6, "writes": 1})), "both 1 to 1000000"},
		"keys":          {with("loop", loop("keys", map[string]any{"dist": "zipf", "theta": 1.5})), "zipf constant outside (0, 1)"},
		"rows absurd":   {with("case", map[string]any{"rows": 1e9}), "out of range"},
		"workers":       {with("case", map[string]any{"concurrency": 1e6}), "out of range"},
		"depth":         {with("depth", 1e6), "out of range"},
		"value size":    {with("value_size", 1<<30), "out of range"},
		"one path": {func(f string) any {
			c := good(f)
			c["paths"], c["passwords"] = []any{map[string]any{"network": "tcp", "address": "127.0.0.1:6379"}}, []string{""}
			return c
		}, "a case measures 2 or more paths"},
		"memory": {func(f string) any {
			c := good(f)
			c["value_size"], c["depth"], c["case"] = 16<<20, 1000, map[string]any{"concurrency": 4096}
			c["loop"] = map[string]any{"n": 40960, "rounds": 1} // an op per worker in each block
			return c
		}, "would hold about"},
	}
	for name, tc := range cases {
		f := filepath.Join(dir, name+".json")
		var b []byte
		switch v := tc.mk(f).(type) {
		case string:
			b = []byte(v)
		default:
			b, _ = json.Marshal(v)
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := dbsock(t, "measure", f)
		if code != 2 || !strings.Contains(stderr, "not a case file") || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want exit 2 and one line saying it is not a case file: %s", name, code, stderr, tc.want)
		}
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: the file is gone: %v", name, err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := dbsock(t, "measure", fifo); code != 2 || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("a FIFO: exit %d, %q", code, stderr)
	}
}

// TestClientBinaryCheckedUpFront: a --client-binary that is not a Linux
// executable (a FIFO, which used to hang dbsock in elf.Open; a script; an
// empty file; a truncated ELF) is refused before any server starts, with
// exit 2 and one line saying how to build one.
func TestClientBinaryCheckedUpFront(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"script": "#!/bin/sh\necho hi\n", "empty": "", "truncated": "\x7fELF\x02\x01\x01"}
	bins := []string{fifo}
	for name, body := range files {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, f)
	}
	for _, b := range bins {
		code, _, stderr := dbsock(t, "run", "echo", "--provider", "local", "--client", "container", "--client-binary", b, "-q")
		if code != 2 || !strings.Contains(stderr, "not a Linux executable") || !strings.Contains(stderr, "go build") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--client-binary %s: exit %d, %q; want exit 2 and one line", filepath.Base(b), code, stderr)
		}
	}
}

// TestKeysFromLimitsBytes: --keys-from counts the bytes of the keys it
// keeps, not only their number (5,000,000 keys of 100 bytes took 1.3 GB),
// says which line is too long, and drops a byte order mark.
func TestKeysFromLimitsBytes(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("k", 1000)
	for i := 0; i < 70_000; i++ { // 70 MB of keys
		f.WriteString(key + strconv.Itoa(i) + "\n")
	}
	f.Close()
	long := filepath.Join(dir, "long")
	os.WriteFile(long, []byte("1\n"+strings.Repeat("x", 2<<20)+"\n"), 0o600)
	for file, want := range map[string]string{big: "64 MiB of key text", long: "line 2 is longer than 1024 KiB"} {
		code, _, stderr := dbsock(t, "run", "redis", "--provider", "local", "--keys-from", file, "--rows", "100000", "-q")
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--keys-from %s: exit %d, %q; want exit 2 saying %q", filepath.Base(file), code, stderr, want)
		}
	}
	bom := filepath.Join(dir, "bom")
	os.WriteFile(bom, []byte("\uFEFF7\n8\n"), 0o600)
	var w workloadOptions
	w.rows = 10
	src, err := w.keySource("redis", bom)
	if err != nil || len(src.Keys) != 2 || src.Keys[0] != "7" {
		t.Errorf("keys with a byte order mark: %q, %v; want [7 8]", src.Keys, err)
	}
}

// TestClosedTMPDIRIsSaidForMariaDB: MariaDB runs as the mysql user when
// dbsock is root; a TMPDIR that user cannot enter is said, with what to do.
func TestClosedTMPDIRIsSaidForMariaDB(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	if os.Geteuid() != 0 {
		t.Skip("as root only: otherwise the server runs as this user")
	}
	closed, err := os.MkdirTemp("/tmp", "c")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(closed) })
	t.Setenv("TMPDIR", closed) // 0700
	code, _, stderr := dbsock(t, "run", "mysql", "--provider", "local", "--n", "10", "--instances", "1", "-q")
	if code == 0 || !strings.Contains(stderr, "cannot enter "+closed) || !strings.Contains(stderr, "set TMPDIR") {
		t.Errorf("exit %d, %q; want the closed directory named", code, stderr)
	}
}
