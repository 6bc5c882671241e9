package reports

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// The client stacks of the multi-stack fixtures, each with its agent's
// hello and its typical speedup (stackSpeed) and latency.
var fixtureStacks = []struct {
	stack  string
	client results.Client
	speed  float64
	unixNs float64
}{
	{"", results.Client{Language: "go", RuntimeVersion: "go1.26.8", Library: "go-redis", LibraryVersion: "v9.23.0"}, 1.36, 18000},
	{"c", results.Client{Language: "c", RuntimeVersion: "gcc 12.2", Library: "hiredis", LibraryVersion: "0.14.1"}, 1.50, 9000},
	{"python", results.Client{Language: "python", RuntimeVersion: "3.11.2", Library: "redis-py", LibraryVersion: "4.3.4"}, 1.39, 21000},
	{"node", results.Client{Language: "node", RuntimeVersion: "20.18.0", Library: "node-redis", LibraryVersion: "4.5.1"}, 1.52, 17000},
	{"php", results.Client{Language: "php", RuntimeVersion: "8.2.29", Library: "phpredis", LibraryVersion: "5.3.7"}, 1.61, 13000},
}

// stacksReport is a run of targets from the first n stacks on 9 server
// instances of one round of 7 block pairs, summarized; each target's
// speedups are the stack's scaled by 1+0.1*(its index), with a
// deterministic spread.
func stacksReport(t *testing.T, targets []string, n int) *results.Report {
	t.Helper()
	r := fixture(t)
	r.Runs, r.Summary = nil, nil
	r.Targets = nil
	r.Config.Instances, r.Config.Rounds, r.Config.Blocks, r.Config.N = 9, 1, 7, 3000
	r.Config.Workload = &results.Workload{Rows: 10000, Keys: "uniform", Op: "read"}
	for _, name := range targets {
		r.Targets = append(r.Targets, results.Target{Name: name, Provenance: drivers.Provenance{Provider: "local"},
			Server: drivers.ServerInfo{Product: strings.ToUpper(name[:1]) + name[1:], Version: "1.0"}})
	}
	for _, s := range fixtureStacks[:n] {
		r.Config.Clients = append(r.Config.Clients, results.StackName(s.stack))
	}
	start := int64(0)
	for ti, name := range targets {
		for si, s := range fixtureStacks[:n] {
			client := s.client
			for in := 1; in <= 9; in++ {
				speed := s.speed * (1 + 0.1*float64(ti)) * (1 + 0.01*float64((in*7+si)%9-4))
				for _, tr := range []drivers.Transport{drivers.TCP, drivers.Unix} {
					h := results.NewHistogram()
					run := results.Run{Case: results.Case{Target: name, Scenario: "pk", Concurrency: 1, ValueSize: 16, Stack: s.stack},
						Client: &client, Transport: tr, Instance: in, Round: 1, N: 7 * 100}
					for j := 0; j < 7; j++ {
						v := s.unixNs * (1 + 0.1*float64(ti)) * (1 + 0.004*float64(j))
						if tr == drivers.TCP {
							v *= speed
						}
						for k := 0; k < 100; k++ {
							_ = h.RecordValue(int64(v * (1 + 0.001*float64(k))))
						}
						run.Blocks = append(run.Blocks, results.Block{Pair: j, Index: 2 * j, StartNs: start, ElapsedNs: int64(v) * 100, N: 100, P50: int64(v), Mean: v, P99: int64(2 * v)})
						start += int64(v) * 100
					}
					enc, err := results.EncodeHistogram(h)
					if err != nil {
						t.Fatal(err)
					}
					run.Histogram, run.TransportVerified = enc, true
					run.Timing = results.Timing{Latency: results.LatencyOf(h), ElapsedNs: start}
					r.Runs = append(r.Runs, run)
				}
			}
		}
	}
	if err := r.Summarize(); err != nil {
		t.Fatal(err)
	}
	return r
}

// renderHTMLOf is Markdown as a blog's renderer (goldmark, GFM) shows it.
func renderHTMLOf(t *testing.T, md []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithParserOptions(parser.WithAutoHeadingID())).Convert(md, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var tags = regexp.MustCompile(`<[^>]*>`)

// TestStacksComparedTable: a run from five stacks has, under its
// headline, a table of each stack's speedup against Go's with the ratio's
// interval and a verdict in words, one sentence per clear answer, and the
// note that the stacks' latencies were measured apart; rendered by
// goldmark it is a table, and the method's paragraph and list read under
// 600 characters.
func TestStacksComparedTable(t *testing.T) {
	r := stacksReport(t, []string{"redis", "postgres"}, 5)
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(md.String(), "## Details")
	php := r.Stacks[3]
	if php.Target != "redis" || php.Stack != "php" || php.RatioCI == nil {
		t.Fatalf("fixture: stack comparison %+v", php)
	}
	wants := []string{
		"**Client stacks compared**",
		fmt.Sprintf("| redis | Unix | PHP 8.2.29 (phpredis 5.3.7) | %.2f× | %.2f× (Go) | %.2f (%.2f–%.2f) | the socket gains more for PHP |",
			php.Speedup, php.ReferenceSpeedup, php.RatioCI.Center, php.RatioCI.Lo, php.RatioCI.Hi),
		fmt.Sprintf("redis: the socket gains more for PHP (%.2f×) than for Go (%.2f×): ratio %.2f (95%% CI %.2f–%.2f).",
			php.Speedup, php.ReferenceSpeedup, php.Ratio, php.RatioCI.Lo, php.RatioCI.Hi),
		"The stacks' p50s were measured apart",
	}
	for _, want := range wants {
		if !strings.Contains(head, want) {
			t.Errorf("the headline lacks %q:\n%s", want, head)
		}
	}
	if math.Abs(php.Ratio/(1.61/1.36)-1) > 0.05 {
		t.Errorf("PHP's ratio %.3f, want about 1.61/1.36 = %.3f", php.Ratio, 1.61/1.36)
	}
	html := renderHTMLOf(t, []byte(head))
	if strings.Count(html, "<table>") != 2 || !strings.Contains(html, "<strong>Client stacks compared</strong>") {
		t.Errorf("goldmark renders %d tables (want the headline's and the stacks'):\n%s", strings.Count(html, "<table>"), html)
	}
	checkMethod(t, html)
	if !strings.Contains(md.String(), "### Client stacks compared") {
		t.Error("the details do not say how stacks were compared")
	}
}

// checkMethod checks the method as rendered: a paragraph and a list of
// five (what was timed, how many, how paired, the interval, the
// placement), under 600 characters of text before the details.
func checkMethod(t *testing.T, html string) {
	t.Helper()
	i := strings.Index(html, "<strong>Method</strong>")
	if i < 0 {
		t.Fatalf("no method paragraph in\n%s", html)
	}
	rest := html[i:]
	end := strings.Index(rest, "</ul>")
	if end < 0 {
		t.Fatalf("the method has no list:\n%s", rest)
	}
	method := rest[:end]
	text := tags.ReplaceAllString(method, "")
	if n := len([]rune(text)); n >= 600 {
		t.Errorf("the method is %d characters before its details, want under 600:\n%s", n, text)
	}
	for _, item := range []string{"timed:", "how many:", "paired:", "interval:", "placement:"} {
		if !strings.Contains(method, "<li><strong>"+item+"</strong>") {
			t.Errorf("the method's list lacks %q:\n%s", item, method)
		}
	}
	if strings.Contains(text, "**") || !strings.Contains(method, `<a href="#details">details</a>`) {
		t.Errorf("the method renders with raw markup or without its link:\n%s", method)
	}
}

// TestFootnotesSayTheirWarning: a warned row's footnote names the row and
// says its warnings in a few words, linking the details; a row whose
// pooled p50s disagree with its paired speedup says so in the row.
func TestFootnotesSayTheirWarning(t *testing.T) {
	r := fixture(t)
	r.Targets[0].Warnings = []results.Warning{results.Warn(results.UnpinnedServer, "The server is not pinned: dbsock pinned its client to CPU 0 but did not start %s, so it could not pin it.", "redis")}
	r.Summary[0].Warnings = []results.Warning{results.Warn(results.RoundsDiffer, "The speedup moved between rounds (1.2× to 1.6×); more rounds average over it.")}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	want := "† Warnings: redis: The speedup moved between rounds (1.2× to 1.6×); The server is not pinned ([details](#details))."
	if !strings.Contains(md.String(), want) {
		t.Errorf("the footnote is not %q:\n%s", want, md.String())
	}
	if strings.Contains(md.String(), "its target's details give it") {
		t.Error("a footnote says nothing of its warning")
	}
}

// TestMethodIsShortFromEveryStack: the method's paragraph and list stay
// under 600 characters with five stacks, several paths and instances.
func TestMethodIsShortFromEveryStack(t *testing.T) {
	r := stacksReport(t, []string{"redis"}, 5)
	r.Config.Paths = []drivers.Transport{drivers.TCP, drivers.Unix, drivers.TCP6, drivers.TLS}
	r.Config.DurationNs = int64(5 * time.Second)
	checkMethod(t, renderHTMLOf(t, []byte(methodSentence(r))))
}
