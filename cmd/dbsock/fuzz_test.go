package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// FuzzRunCommandLine drives the whole "dbsock run" command line (targets,
// flags and values) through parsing, validation and planning, stopping
// before anything starts. Its property: planning either accepts the line
// (exit 0, nothing on stderr) or refuses it as a usage error (exit 2) on
// one line that starts "dbsock: " and names something the user typed (a
// flag, a target, a value) or points at --help; never a panic, never a
// runtime failure (exit 1: nothing ran), and the same answer twice (no
// state leaks from one invocation into the next). Paths are left out (a
// file flag would touch the disk); each arg is a space-separated word.
func FuzzRunCommandLine(f *testing.F) {
	for _, s := range []string{
		"echo", "all --n 10", "mysql --n 10000", "echo --rate NaN", "echo --rate 1e-10 --duration 200ms", "echo --rate +Inf",
		"redis --redis-addr 10.0.0.1:6379 --redis-socket r.sock", "redis --redis-addr [::1]:0", "echo --precision 3% --max-duration 1m",
		"echo --blocks 0", "echo --seed 18446744073709551615", "echo --placement auto --client-cpu 0-1", "echo --concurrency 1,1,0",
		"echo --value-size 1KiB,1KiB", "echo --threshold echo.unix_speedup_p50.lo>=NaN", "echo --out x.json --out ./x.json",
		"postgres --postgres-addr 127.0.0.1:5432 --postgres-socket-dir . --provider external", "echo --duration -1s", "--help",
		"echo --image echo=foo", "mysql --image mysql=:::", "echo --op-timeout 1ns", "echo --scenario connect --rate 5",
		"mongo --mongo-op drop", "echo --format yaml", "echo --plot x.gif", "echo --warmup -1 --rounds 1001",
		"mysql --op mixed:95/5", "mysql --op mixed:0/5", "mysql redis --query SELECT", "redis --query GET", "mongo --mongo-collection a.b",
		"redis --pipeline 10000 --value-size 16MiB", "echo --concurrency 4096 --value-size 16MiB", "redis --rows 100000000 --value-size 1MiB",
		"redis --explain --pipeline 2", "redis --server-pid mysql=1", "mysql --keys zipf:1.5", "memcached --query get",
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
		args := append([]string{"run"}, strings.Fields(line)...)
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, &out, &errb)
		switch code {
		case ExitOK:
			if errb.Len() != 0 {
				t.Fatalf("%q: accepted, but stderr says %q", line, errb.String())
			}
		case ExitUsage:
			msg := strings.TrimRight(errb.String(), "\n")
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "dbsock: ") {
				t.Fatalf("%q: usage error not on one \"dbsock: \" line: %q", line, errb.String())
			}
			if !namesInput(msg, args[1:]) {
				t.Fatalf("%q: usage error %q names nothing the user typed", line, msg)
			}
		default:
			t.Fatalf("%q: exit %d (%q); planning runs nothing, so it accepts or refuses", line, code, errb.String())
		}
		var out2, errb2 bytes.Buffer
		if code2 := Main(context.Background(), args, &out2, &errb2); code2 != code || (code == ExitUsage && errb2.String() != errb.String()) {
			t.Fatalf("%q: exit %d then %d (%q, then %q)", line, code, code2, errb.String(), errb2.String())
		}
	})
}

// namesInput says whether a usage error names one of args (a flag without
// its value, a target, a value), or sends the user to --help.
func namesInput(msg string, args []string) bool {
	if strings.Contains(msg, "--help") || strings.Contains(msg, "no target given") {
		return true
	}
	has := func(w string) bool {
		q := strconv.Quote(w) // as %q shows it
		return (len(w) >= 2 && (strings.Contains(msg, w) || strings.Contains(msg, q[1:len(q)-1]))) || (w != "" && strings.Contains(msg, q))
	}
	for _, a := range args {
		name, value, _ := strings.Cut(a, "=")
		words := []string{a, name, value, strings.TrimLeft(name, "-")}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			words = append(words, a[2:]) // -oVALUE
		}
		words = append(words, strings.Split(value+","+a, ",")...) // one element of a list
		for _, w := range words {
			if has(w) {
				return true
			}
		}
	}
	return false
}

func TestRepeatedListValuesAreOneCase(t *testing.T) {
	s := sweepOptions{scenarios: []string{"pk", "pk"}, concurrency: []int{1, 8, 1}, sizeSpecs: []string{"1KiB", "1024", "16"}}
	if err := s.parse(false); err != nil {
		t.Fatal(err)
	}
	if len(s.scenarios) != 1 || len(s.concurrency) != 2 || len(s.sizes) != 2 {
		t.Fatalf("scenarios %v, concurrency %v, sizes %v; want repeats collapsed", s.scenarios, s.concurrency, s.sizes)
	}
}
