package docs

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitQuotesLikeAShell(t *testing.T) {
	for line, want := range map[string][]string{
		`dbsock run mysql --n 10`:                           {"dbsock", "run", "mysql", "--n", "10"},
		`dbsock run redis --threshold 'redis.unix.p99<2ms'`: {"dbsock", "run", "redis", "--threshold", "redis.unix.p99<2ms"},
		`--query "SELECT \"x\" FROM t" # a comment`:         {"--query", `SELECT "x" FROM t`},
		`a\ b c`: {"a b", "c"},
		`''`:     {""},
		`x#y z`:  {"x#y", "z"},
	} {
		got, err := Split(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	if _, err := Split(`dbsock run 'mysql`); err == nil {
		t.Error("an unclosed quote was accepted")
	}
}

const page = "# Title\n\nSee [the method](method.md#the-speedup-and-its-interval), [here](#title) and [a site](https://example.com).\n" +
	"Run `dbsock targets` or `dbsock/mariadb:10.11`, or `dbsock run all 2>&1 | head`.\n\n" +
	"```sh\nDBSOCK_X=1 dbsock run mysql \\\n  --n 10   # ten\nscripts/install-deps.sh && go run ./cmd/dbsock run all | tee x\n```\n\n" +
	"```go\ndbsock.Compare(x)\n```\n\n" +
	"<!-- figure headline: dbsock run redis --provider local -->\nold\n<!-- /figure -->\n" +
	"<!-- figure sh: echo hi -->\n<!-- /figure -->\n"

func TestCommandLinesFindsEveryDbsockCommand(t *testing.T) {
	got, err := CommandLines(page)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"run", "mysql", "--n", "10"}, {"run", "all"}, {"targets"}, {"run", "all"}, {"run", "redis", "--provider", "local"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CommandLines = %q, want %q", got, want)
	}
}

func TestLinksAndAnchors(t *testing.T) {
	got := Links(page)
	want := []Link{{"method.md", "the-speedup-and-its-interval"}, {"", "title"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Links = %+v, want %+v", got, want)
	}
	a := Anchors("## The speedup and its interval\n## Between containers: `--client container`\n## Unix × TCP — 1.0\n```sh\n# not a heading\n```\n")
	for _, want := range []string{"the-speedup-and-its-interval", "between-containers---client-container", "unix--tcp--10"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}

func TestRewriteReplacesEachFigureBody(t *testing.T) {
	var seen []Figure
	out, err := Rewrite(page, func(f Figure) (string, error) {
		seen = append(seen, f)
		return "new " + f.Kind, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Command != "dbsock run redis --provider local" || seen[0].Body != "old\n" || seen[1].Kind != "sh" {
		t.Fatalf("figures seen: %+v", seen)
	}
	if !strings.Contains(out, "-->\nnew headline\n<!-- /figure -->") || !strings.Contains(out, "-->\nnew sh\n<!-- /figure -->") || strings.Contains(out, "old") {
		t.Fatalf("rewritten:\n%s", out)
	}
	if _, err := Rewrite("<!-- figure table: dbsock run x -->\n<!-- /figure -->", func(Figure) (string, error) { return "", nil }); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

func TestDemoteAndSection(t *testing.T) {
	md := "# Unix vs TCP\n\n| a |\n\n### Where the microseconds go\n\nText.\n\n| t | p |\n|---|---|\n| x | 1 |\n\n## Environment\n"
	if got := Demote(md); !strings.HasPrefix(got, "**Unix vs TCP**\n") || strings.Contains(got, "\n#") {
		t.Errorf("Demote = %q", got)
	}
	got, err := Section(md, "Where the microseconds go")
	if err != nil || got != "| t | p |\n|---|---|\n| x | 1 |\n" {
		t.Errorf("Section = %q, %v", got, err)
	}
	if _, err := Section(md, "Nowhere"); err == nil {
		t.Error("a missing section was found")
	}
}
