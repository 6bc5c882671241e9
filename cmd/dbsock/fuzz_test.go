package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// FuzzRunCommandLine drives the whole "dbsock run" command line (targets,
// flags and values) through parsing, validation and planning, stopping
// before anything starts: no input may panic, and the exit status is 0, 1
// or 2, with a usage error on one line. Paths are left out (a file flag
// would touch the disk); each arg is a space-separated word.
func FuzzRunCommandLine(f *testing.F) {
	for _, s := range []string{
		"echo", "all --n 10", "mysql --n 10000", "echo --rate NaN", "echo --rate 1e-10 --duration 200ms", "echo --rate +Inf",
		"redis --redis-addr 10.0.0.1:6379 --redis-socket r.sock", "redis --redis-addr [::1]:0", "echo --precision 3% --max-duration 1m",
		"echo --blocks 0", "echo --seed 18446744073709551615", "echo --placement auto --client-cpu 0-1", "echo --concurrency 1,1,0",
		"echo --value-size 1KiB,1KiB", "echo --threshold echo.unix_speedup_p50.lo>=NaN", "echo --out x.json --out ./x.json",
		"postgres --postgres-addr 127.0.0.1:5432 --postgres-socket-dir . --provider external", "echo --duration -1s", "--help",
		"echo --image echo=foo", "mysql --image mysql=:::", "echo --op-timeout 1ns", "echo --scenario connect --rate 5",
		"mongo --mongo-op drop", "echo --format yaml", "echo --plot x.gif", "echo --warmup -1 --rounds 1001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "/\x00") || len(line) > 400 {
			return
		}
		chdir(t, t.TempDir())
		old := execRun
		execRun = planOnly
		defer func() { execRun = old }()
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"run"}, strings.Fields(line)...), &out, &errb)
		if code != ExitOK && code != ExitFailed && code != ExitUsage {
			t.Fatalf("%q: exit %d", line, code)
		}
		if code == ExitUsage && strings.Count(strings.TrimRight(errb.String(), "\n"), "\n") != 0 {
			t.Fatalf("%q: usage error on more than one line: %q", line, errb.String())
		}
	})
}

func TestRepeatedListValuesAreOneCase(t *testing.T) {
	s := sweepOptions{scenarios: []string{"pk", "pk"}, concurrency: []int{1, 8, 1}, sizeSpecs: []string{"1KiB", "1024", "16"}}
	if err := s.validate(false); err != nil {
		t.Fatal(err)
	}
	if len(s.scenarios) != 1 || len(s.concurrency) != 2 || len(s.sizes) != 2 {
		t.Fatalf("scenarios %v, concurrency %v, sizes %v; want repeats collapsed", s.scenarios, s.concurrency, s.sizes)
	}
}
