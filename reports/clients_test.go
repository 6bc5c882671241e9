package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/results"
)

// TestHeadlineRowPerStack: a run of several client stacks has one
// headline row per target and stack, named with the stack's runtime and
// library as its hello said them (escaped: a hello is input), and a row
// for each stack a target was skipped from, with the reason; the details
// give each stack's server-side evidence of each path.
func TestHeadlineRowPerStack(t *testing.T) {
	r := fixture(t)
	goClient := &results.Client{Language: "go", RuntimeVersion: "go1.26.8", Library: "github.com/redis/go-redis/v9", LibraryVersion: "v9.23.0"}
	py := &results.Client{Language: "python", RuntimeVersion: "3.11.2", Library: "redis|py <b>", LibraryVersion: "4.3.4", TimingOverheadNs: 70}
	for _, run := range r.Runs {
		run.Client = goClient
		r.Runs = append(r.Runs, run)
		run.Stack, run.Client = "python", py
		r.Runs = append(r.Runs, run)
	}
	r.Runs = r.Runs[4:]
	r.Config.Clients = []string{"go", "python", "node"}
	r.Targets[0].Skipped = []results.SkippedClient{{Stack: "node", Reason: "the node agent has no client library for redis"}}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| target and client | server | TCP p50 |",
		"| redis from Go 1.26.8 (github.com/redis/go-redis/v9 v9.23.0) | Redis 7.0.15 |",
		`| redis from Python 3.11.2 (redis\|py &lt;b&gt; 4.3.4) | Redis 7.0.15 |`,
		"| redis from node | Redis 7.0.15 | – | – | – | skipped: the node agent has no client library for redis |",
		"from each of Go, Python, Node.js in turn",
		"timed as it times an op, part of each op it times): redis from python 70 ns (0.93% of its Unix p50).",
		"- Verified TCP from Go: ", "- Verified TCP from Python: ", "- Verified Unix from Go: ", "- Verified Unix from Python: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<b>") || strings.Count(md, "| redis from ") != 3 {
		t.Errorf("want three escaped rows:\n%s", md)
	}
	if !strings.Contains(md, "The goal is at most 1% of the case's Unix p50; every agent here is within it.") {
		t.Errorf("the method does not judge the agent's cost against its goal:\n%s", md)
	}
	var names []string
	for _, s := range r.Summary {
		names = append(names, caseName(r, s.Case)) // the chart's ticks and the .hgrm files
	}
	if strings.Join(names, ",") != "redis go,redis python" {
		t.Errorf("the chart names the cases %q, want each with its stack", names)
	}
	r.Summary[1].Client.TimingOverheadNs = 2000
	b.Reset()
	if err := Markdown(&b, r); err != nil || !strings.Contains(b.String(), "redis from python 2000 ns (26.66% of its Unix p50), **over its goal**") {
		t.Errorf("an agent over its goal is not said to be (%v):\n%s", err, b.String())
	}
}

// TestCSVNamesTheStack: a run of several client stacks has a client
// column after the others, in both CSV tables; a run of Go's alone has
// not (TestCSVHasOneRowPerRun and TestBlocksCSV keep its columns).
func TestCSVNamesTheStack(t *testing.T) {
	r := fixture(t)
	r.Runs[1].Stack = "python:psycopg"
	r.Config.Clients = []string{"go", "python:psycopg"}
	for name, write := range map[string]func(*bytes.Buffer, *results.Report) error{
		"csv":    func(b *bytes.Buffer, r *results.Report) error { return CSV(b, r) },
		"blocks": func(b *bytes.Buffer, r *results.Report) error { return BlocksCSV(b, r) },
	} {
		var b bytes.Buffer
		if err := write(&b, r); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if !strings.HasSuffix(lines[0], ",instance,client") || !strings.HasSuffix(lines[1], ",go") || !strings.Contains(b.String(), ",python:psycopg\n") {
			t.Errorf("%s: no client column:\n%s", name, b.String())
		}
	}
}

// TestRefusedCaseSaysSo: a case whose client's report an audit refused
// shows no figure and says it was refused, not that it failed.
func TestRefusedCaseSaysSo(t *testing.T) {
	r := fixture(t)
	r.Runs[0].Incomplete, r.Runs[0].Disbelieved, r.Runs[0].Error = true, true, "the server did not see what the agent reported"
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(buf.String(), "**Method**")
	if !strings.Contains(head, "refused: what its client reported disagreed with what dbsock and the server saw") || strings.Contains(head, "µs |") {
		t.Errorf("the headline of a refused case:\n%s", head)
	}
}

// TestYourAgentNamesItsLanguage: a --clients cmd: agent is named by the
// language and version its hello gave, through the stacks' words.
func TestYourAgentNamesItsLanguage(t *testing.T) {
	for runtime, want := range map[string]string{
		"go 1.26.8":     "your agent in Go 1.26.8 (go-redis 9)",
		"python 3.11.2": "your agent in Python 3.11.2 (go-redis 9)",
		"rust":          "your agent in rust (go-redis 9)",
		"":              "your agent (go-redis 9)",
	} {
		s := results.Summary{Client: &results.Client{Language: "cmd", RuntimeVersion: runtime, Library: "go-redis", LibraryVersion: "9"}}
		if got := stackName(s); got != want {
			t.Errorf("runtime %q: %q, want %q", runtime, got, want)
		}
	}
}
