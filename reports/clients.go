package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/agents"
	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// rowName names summary s's row in the headline: its target, the client
// stack when the run measured several ("redis from Python 3.11.2
// (redis-py 4.3.4)"), and the case where the run has more than one per
// target and stack (sweep) or it is not the plain lookup.
func rowName(r *results.Report, s results.Summary, sweep bool) string {
	c := s.Case
	name := c.Target
	if len(r.Config.Clients) > 0 {
		name += " from " + stackName(s)
		c.Stack = ""
		sweep = casesPerStack(r) > 1
	}
	if sweep || !c.Plain() || len(r.Config.ValueSizes) > 0 {
		name += ": " + c.Label()
	}
	return name
}

// casesPerStack is the most cases the run has of one target and client
// stack.
func casesPerStack(r *results.Report) int {
	n := map[[2]string]int{}
	most := 0
	for _, s := range r.Summary {
		k := [2]string{s.Target, s.Stack}
		n[k]++
		most = max(most, n[k])
	}
	return most
}

// languages are the client stacks' languages as a reader names them:
// Go's, your agent's (cmd), and those of the stacks' agents/NAME/stack.json.
var languages = stackLanguages()

func stackLanguages() map[string]string {
	m := map[string]string{"go": "Go", "cmd": "your agent in"}
	stacks, _ := agents.Stacks("") // none when the agents directory cannot be read: a stack is then named as given
	for _, s := range stacks {
		m[s] = agents.Language(s)
	}
	return m
}

// stackName names the client stack that did s's ops: its language and
// runtime, and its library with its version, as its agent said them
// (already escaped in a safe copy).
func stackName(s results.Summary) string {
	name, model := stackParts(s)
	if model != "" {
		name += ", " + model
	}
	return name
}

// stackParts are stackName's two parts: the language, runtime and
// library, and the worker model at load ("" at rest).
func stackParts(s results.Summary) (name, model string) {
	c := s.Client
	if c == nil {
		if s.Stack == "" {
			return "Go", ""
		}
		return s.Stack, ""
	}
	lang, ok := languages[c.Language]
	if !ok {
		lang = c.Language
	}
	name = lang
	if c.Language == "cmd" {
		// Your agent's own language and version, as its hello said them
		// ("go 1.26.8"): "your agent in Go 1.26.8".
		word, version, _ := strings.Cut(c.RuntimeVersion, " ")
		if l, ok := languages[word]; ok && word != "cmd" {
			word = l
		}
		name = strings.TrimSpace(lang + " " + strings.TrimSpace(word+" "+version))
		if word == "" {
			name = "your agent"
		}
	} else if v := strings.TrimPrefix(c.RuntimeVersion, "go"); v != "" {
		name += " " + v
	}
	if c.Library != "" {
		name += " (" + strings.TrimSpace(c.Library+" "+c.LibraryVersion) + ")"
	}
	return name, workerModels[c.Workers]
}

// workerModels name the concurrency model a stack ran a case's
// connections in, at load (results.Client.Workers).
var workerModels = map[string]string{
	"threads":    "a thread per connection",
	"processes":  "a process per connection",
	"event-loop": "one event loop",
	"goroutines": "a goroutine per connection",
}

// clientsPhrase says who did the ops: "one Go client", or the stacks of a
// run with several (run --clients).
func clientsPhrase(r *results.Report) string {
	if len(r.Config.Clients) == 0 {
		if freshGo(r) {
			return "one Go client (dbsock's own agent, a fresh process for each server instance, timing each op with dbsock's drivers)"
		}
		return "one Go client"
	}
	var names []string
	for _, c := range r.Config.Clients {
		lang, lib, _ := strings.Cut(c, ":")
		name, ok := languages[lang]
		if !ok {
			name = lang
		}
		if lang == "cmd" {
			name = "your agent"
		}
		if lib != "" {
			name += " (" + lib + ")"
		}
		names = append(names, name)
	}
	goes := "Go: dbsock's own drivers"
	if freshGo(r) {
		goes = "Go: dbsock's own drivers in dbsock's own agent"
	}
	return "each of " + strings.Join(names, ", ") + " in turn on each server instance, the order rotating from one instance to the next (" + goes + "; the others: an agent process with that language's client library; each " +
		"started by dbsock afresh for each server instance, so that it inherits the CPUs dbsock's client is pinned to, timing each op on its language's monotonic clock, each connection verified on the server side)"
}

// freshGo says whether the report's Go client ran as dbsock's own agent, a
// fresh process for each server instance (results.Client.FreshProcess).
func freshGo(r *results.Report) bool {
	for _, run := range r.Runs {
		if run.Stack == "" && run.Client != nil && run.Client.FreshProcess {
			return true
		}
	}
	return false
}

// writeUnmeasured gives a row to each target without a result: failed,
// or skipped from every client stack asked for.
func writeUnmeasured(b *strings.Builder, r *results.Report, cpu bool) {
	for _, t := range r.Targets {
		if slices.ContainsFunc(r.Summary, func(s results.Summary) bool { return s.Target == t.Name }) {
			continue // a target with results has its rows above; its details say what went wrong
		}
		writeSkipped(b, r, t.Name, cpu)
		if t.Error != "" {
			fmt.Fprintf(b, "| %s | %s | – | – | – | not measured (see its details)%s\n", cell(t.Name), cell(orUnknown(serverColumnOrNone(t))), rowEnd(cpu))
		}
	}
}

// writeSkipped gives a row to each client stack target was not measured
// from, with the reason.
func writeSkipped(b *strings.Builder, r *results.Report, target string, cpu bool) {
	for _, t := range r.Targets {
		if t.Name != target {
			continue
		}
		for _, sk := range t.Skipped {
			fmt.Fprintf(b, "| %s from %s | %s | – | – | – | skipped: %s%s\n", cell(t.Name), cell(sk.Stack), cell(orUnknown(serverColumnOrNone(t))), cell(sk.Reason), rowEnd(cpu))
		}
	}
}

// rowEnd ends a headline row without figures.
func rowEnd(cpu bool) string {
	if cpu {
		return " | – |"
	}
	return " |"
}

// writeOverheads says each agent's own cost of timing an op, and what
// share of its case's Unix p50 that is (none without agents).
func writeOverheads(b *strings.Builder, r *results.Report) {
	var parts, goals, goalWords []string
	over := 0
	seen := map[[2]string]bool{}
	for _, s := range r.Summary {
		k := [2]string{s.Target, s.Stack}
		if s.Stack == "" || s.Client == nil || s.Client.TimingOverheadNs <= 0 || seen[k] {
			continue
		}
		seen[k] = true
		part := fmt.Sprintf("%s from %s %d ns", s.Target, s.Stack, s.Client.TimingOverheadNs)
		if g := s.Client.TimingGoalNs; g > 0 && !slices.Contains(goals, s.Stack) {
			goals = append(goals, s.Stack)
			goalWords = append(goalWords, fmt.Sprintf("at most %d ns for %s", g, s.Stack))
		}
		if p50 := s.Side(results.Socket()).Latency.P50; p50 > 0 {
			part += fmt.Sprintf(" (%.2f%% of its Unix p50)", 100*float64(s.Client.TimingOverheadNs)/float64(p50))
		}
		if s.Client.OverheadOverGoal(s.Side(results.Socket()).Latency.P50) {
			part += ", **over its goal**"
			over++
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return
	}
	own := ""
	if len(goalWords) > 0 {
		own = " (and " + strings.Join(goalWords, ", ") + ", as its stack declares)"
	}
	fmt.Fprintf(b, "Each agent's own cost of timing an op (the p50 of 10,000 empty ops timed as it times an op, part of each op it times): %s. "+
		"The goal is at most %g%% of the case's Unix p50%s; %s.\n\n", strings.Join(parts, "; "),
		100*results.MaxOverheadShare, own, overWords(over, len(parts)))
}

// overWords says how many of n agents' timing costs miss their goal.
func overWords(over, n int) string {
	switch {
	case over == 0:
		return "every agent here is within it"
	case over == n:
		return "no agent here is within it: its cost is a visible part of each op"
	}
	return fmt.Sprintf("%d of %d agents here are over it: their cost is a visible part of each op", over, n)
}

// writeEndpoints lists the target's endpoints, and each path's evidence
// from the server and what its connection negotiated.
func writeEndpoints(b *strings.Builder, r *results.Report, t results.Target) {
	for _, ep := range t.Endpoints {
		fmt.Fprintf(b, "- Endpoint: %s", ep)
		if ep.TLSTrust != "" {
			fmt.Fprintf(b, " (TLS 1.2 or later, the client trusting %s)", ep.TLSTrust)
		}
		b.WriteString("\n")
	}
	paths := r.Config.Paths
	if len(paths) == 0 {
		paths = drivers.Transports[:]
	}
	stacks := targetStacks(r, t.Name)
	for _, tr := range paths {
		for _, stack := range stacks {
			i := slices.IndexFunc(r.Runs, func(run results.Run) bool {
				return run.Target == t.Name && run.Stack == stack && run.TransportVerified && run.Transport == tr
			})
			if i < 0 {
				continue
			}
			run, from := r.Runs[i], ""
			if len(stacks) > 1 {
				from = " from " + stackLabel(stack)
			}
			fmt.Fprintf(b, "- Verified %s%s: %s\n", run.Transport.Label(), from, run.Evidence)
			if run.Negotiated != nil {
				fmt.Fprintf(b, "- Negotiated over %s%s: %s\n", run.Transport.Label(), from, run.Negotiated)
			}
		}
	}
}

// targetStacks are the client stacks target's runs came from, in the
// order they first appear ("" for Go's drivers).
func targetStacks(r *results.Report, target string) []string {
	var stacks []string
	for _, run := range r.Runs {
		if run.Target == target && !slices.Contains(stacks, run.Stack) {
			stacks = append(stacks, run.Stack)
		}
	}
	return stacks
}

// stackLabel names a client stack as --clients gave it, in words: "Go"
// for dbsock's own drivers, "Python (psycopg)", "your agent".
func stackLabel(stack string) string {
	lang, lib, _ := strings.Cut(stack, ":")
	switch {
	case stack == "":
		return "Go"
	case lang == "cmd":
		return "your agent"
	}
	if l, ok := languages[lang]; ok {
		lang = l
	}
	if lib != "" {
		lang += " (" + lib + ")"
	}
	return lang
}

// serverColumnOrNone is serverColumn where the server is known.
func serverColumnOrNone(t results.Target) string {
	if t.Server.Product == "" {
		return t.Server.String()
	}
	return serverColumn(t)
}

// caseFailed says, of a case that has no result to show (no comparison
// of the socket, or every op failed on a side of it), that it failed, when
// a run of it stopped early or its target failed: the row then gives no
// figure, only that.
func caseFailed(r *results.Report, s *results.Summary) (string, bool) {
	c := s.ComparisonOf(results.Socket())
	if c != nil && c.VerdictKind != results.NoResult {
		return "", false
	}
	for _, run := range r.Runs {
		if run.Case == s.Case && run.Disbelieved {
			return "refused: what its client reported disagreed with what dbsock and the server saw, so no figure of it is shown (see its details)", true
		}
	}
	for _, run := range r.Runs {
		if run.Case == s.Case && run.Incomplete {
			return "failed: no result (see its details)", true
		}
	}
	if r.Incomplete(s.Target) != "" {
		return "failed: no result (see its details)", true
	}
	return "", false
}

// okOrDash is text, or a dash when the side had no successful op.
func okOrDash(side results.Side, text string) string {
	if side.N-side.Errors <= 0 {
		return "–"
	}
	return text
}
