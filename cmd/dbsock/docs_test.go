package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/docs"
)

// docFiles are the pages a user reads: README.md, CONTRIBUTING.md and docs/.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, n := range append(names, "../../README.md", "../../CONTRIBUTING.md") {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		pages[n] = string(b)
	}
	if len(pages) < 10 {
		t.Fatalf("found %d pages; README.md, CONTRIBUTING.md and docs/*.md expected", len(pages))
	}
	return pages
}

// TestReadmeIsShort: README.md is read in a few minutes; the rest is in docs/.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Fatalf("README.md has %d lines; keep it at 250 or fewer and move the rest into docs/", n)
	}
	for _, cmd := range []string{"scripts/install-deps.sh && go run ./cmd/dbsock run all --provider local", "make test"} {
		if !strings.Contains(string(b), "```sh\n"+cmd+"\n```") {
			t.Errorf("README.md does not give the command %q in a block of its own", cmd)
		}
	}
}

// TestDocLinksResolve: every relative link of README.md, CONTRIBUTING.md
// and docs/ names a file that exists, and its #anchor a heading there.
func TestDocLinksResolve(t *testing.T) {
	pages := docFiles(t)
	for name, md := range pages {
		for _, l := range docs.Links(md) {
			target := name
			if l.Target != "" {
				target = filepath.Join(filepath.Dir(name), l.Target)
			}
			b, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s links to %s: %v", name, l.Target, err)
				continue
			}
			if l.Anchor != "" && !docs.Anchors(string(b))[l.Anchor] {
				t.Errorf("%s links to %s#%s: %s has no such heading", name, l.Target, l.Anchor, target)
			}
		}
	}
}

// TestDocCommandLinesParse: every dbsock command line the docs show names
// a real subcommand, real flags with values of the right kind, and real
// targets; nothing is run.
func TestDocCommandLinesParse(t *testing.T) {
	parseRunsOnly(t)
	total := 0
	for name, md := range docFiles(t) {
		lines, err := docs.CommandLines(md)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, args := range lines {
			total++
			if err := parseOnly(args); err != nil {
				t.Errorf("%s: dbsock %s: %v", name, strings.Join(args, " "), err)
			}
		}
	}
	if total < 50 {
		t.Fatalf("found %d dbsock command lines in the docs; the extraction is broken", total)
	}
}

// parseOnly parses one command line as dbsock would: run through its own
// validation (execRun stubbed), the other subcommands by their flags and
// arguments, without running them.
func parseOnly(args []string) error {
	root := newRootCmd(io.Discard, io.Discard)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd.Name() == "run" {
		if code := Main(context.Background(), args, io.Discard, io.Discard); code != ExitOK {
			var errb strings.Builder
			Main(context.Background(), args, io.Discard, &errb)
			return errorString(strings.TrimSpace(errb.String()))
		}
		return nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if cmd.Args == nil || len(cmd.Flags().Args()) == 0 {
		return nil // "dbsock report" named in prose, without its file
	}
	return cmd.Args(cmd, cmd.Flags().Args())
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestEveryFigureIsMeasured: a figure block in the docs holds what
// scripts/figures wrote, never an empty placeholder.
func TestEveryFigureIsMeasured(t *testing.T) {
	n := 0
	for name, md := range docFiles(t) {
		for _, f := range docs.Figures(md) {
			n++
			if strings.TrimSpace(f.Body) == "" {
				t.Errorf("%s: the figure of %q is empty; run go run ./scripts/figures -only %q", name, f.Command, f.Command)
			}
		}
	}
	if n == 0 {
		t.Fatal("no figure blocks found in the docs")
	}
}

// TestParseOnlyRefusesWhatDbsockRefuses: the docs check fails on an unknown
// flag, subcommand, target or value, and accepts a good line.
func TestParseOnlyRefusesWhatDbsockRefuses(t *testing.T) {
	parseRunsOnly(t)
	for _, bad := range [][]string{
		{"run", "redis", "--no-such-flag"},
		{"run", "nosuchdb"},
		{"run", "redis", "--n", "ten"},
		{"run", "redis", "--provider", "cloud"},
		{"compare", "a.json", "--fail-on-regresion", "10%"},
		{"report", "a.json", "--bye", "scenario"},
	} {
		if err := parseOnly(bad); err == nil {
			t.Errorf("dbsock %s was accepted", strings.Join(bad, " "))
		}
	}
	if err := parseOnly([]string{"run", "redis", "--paths", "tcp,tcp6,unix", "--threshold", "redis.unix.p99<2ms"}); err != nil {
		t.Errorf("a good line was refused: %v", err)
	}
}

// parseRunsOnly makes "dbsock run" parse and validate its flags and
// targets, and stop there, for the rest of the test.
func parseRunsOnly(t *testing.T) {
	old := execRun
	execRun = func(_ context.Context, o *runOptions, args []string, _, _ io.Writer) error {
		if len(args) > 0 { // "dbsock run" named in prose, without targets
			if _, err := parseTargets(args); err != nil {
				return err
			}
		}
		return o.parse()
	}
	t.Cleanup(func() { execRun = old })
}
