package reports

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/results"
)

// The headline's stacks compared: for each target measured from several
// client stacks, each stack's speedup against the reference stack's,
// paired by server instance (results/stacks.go), in a short table and one
// sentence a post can quote.

// summaryOf is the summary of case c, nil when the report has none.
func summaryOf(r *results.Report, c results.Case) *results.Summary {
	for i := range r.Summary {
		if r.Summary[i].Case == c {
			return &r.Summary[i]
		}
	}
	return nil
}

// caseStackLabel names the stack of case c in words: its language, runtime,
// library and version where its agent said them.
func caseStackLabel(r *results.Report, c results.Case) string {
	if s := summaryOf(r, c); s != nil {
		return stackName(*s)
	}
	if c.Stack == "" {
		return "Go"
	}
	return c.Stack
}

// shortStack is a stack's language ("PHP", "Go"), for a sentence, with
// what --clients gave after it, a library or a worker model, where it
// gave one ("C (eventloop)"): one stack told from another of its language.
func shortStack(stack string) string {
	lang, rest, _ := strings.Cut(results.StackName(stack), ":")
	name, ok := languages[lang]
	if !ok || lang == "cmd" {
		return lang
	}
	if rest != "" {
		name += " (" + rest + ")"
	}
	return name
}

// pathGain names what gains: "the socket" for the Unix path, else the
// path's label.
func pathGain(p drivers.Transport) string {
	if p == results.Socket() {
		return "the socket"
	}
	return p.Label()
}

// stackVerdict is a stack comparison's verdict in words.
func stackVerdict(sc results.StackComparison) string {
	mine, ref := shortStack(sc.Stack), shortStack(sc.Reference)
	switch sc.VerdictKind {
	case results.UnixFaster:
		return fmt.Sprintf("%s gains more for %s", pathGain(sc.Path), mine)
	case results.TCPFaster:
		return fmt.Sprintf("%s gains more for %s", pathGain(sc.Path), ref)
	case results.NoDifference:
		return fmt.Sprintf("the same gain (within ±%.0f%%)", 100*results.Band)
	case results.Undecided:
		return "undecided: the interval spans 1"
	case results.NotSignificant:
		return "not significant after Holm's adjustment"
	case results.TooFewPairs, results.TooFewInstances:
		return fmt.Sprintf("no interval: %d server instances or more give one", results.MinInstances)
	}
	return string(sc.VerdictKind)
}

// ratioText is a ratio with its interval: "1.18 (1.15–1.21)".
func ratioText(v float64, ci *results.Interval) string {
	if ci == nil {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", ci.Center, ci.Lo, ci.Hi)
}

// stackSentence is the post's answer for one comparison: "redis: the
// socket gains more for PHP (1.61×) than for Go (1.36×): ratio 1.18 (95%
// CI 1.15–1.21)".
func stackSentence(sc results.StackComparison) string {
	mine, ref := shortStack(sc.Stack), shortStack(sc.Reference)
	ci := ""
	if sc.RatioCI != nil {
		ci = fmt.Sprintf(" (95%% CI %.2f–%.2f)", sc.RatioCI.Lo, sc.RatioCI.Hi)
	}
	gain := pathGain(sc.Path)
	switch sc.VerdictKind {
	case results.UnixFaster:
		return fmt.Sprintf("%s: %s gains more for %s (%.2f×) than for %s (%.2f×): ratio %.2f%s.", sc.Target, gain, mine, sc.Speedup, ref, sc.ReferenceSpeedup, sc.Ratio, ci)
	case results.TCPFaster:
		return fmt.Sprintf("%s: %s gains more for %s (%.2f×) than for %s (%.2f×): ratio %.2f%s.", sc.Target, gain, ref, sc.ReferenceSpeedup, mine, sc.Speedup, 1/sc.Ratio, invertCI(sc.RatioCI))
	}
	return fmt.Sprintf("%s: %s gains %.2f× for %s and %.2f× for %s: ratio %.2f%s, %s.", sc.Target, gain, sc.Speedup, mine, sc.ReferenceSpeedup, ref, sc.Ratio, ci, stackVerdict(sc))
}

// invertCI is the interval of the reciprocal ratio, in a sentence.
func invertCI(ci *results.Interval) string {
	if ci == nil || ci.Lo <= 0 || ci.Hi <= 0 {
		return ""
	}
	return fmt.Sprintf(" (95%% CI %.2f–%.2f)", 1/ci.Hi, 1/ci.Lo)
}

// writeStacks writes the stacks-compared table under the headline, when
// the run compared any, with one sentence per clear answer.
func writeStacks(b *strings.Builder, r *results.Report) {
	if len(r.Stacks) == 0 {
		return
	}
	ref := shortStack(r.Stacks[0].Reference)
	fmt.Fprintf(b, "**Client stacks compared** (each stack's speedup against %s's, paired on the same server instances: [how](#client-stacks-compared))\n\n", ref)
	b.WriteString("| target | path | stack | its speedup | reference's speedup | ratio (95% CI) | verdict |\n|---|---|---|--:|--:|--:|---|\n")
	var clear []string
	for _, sc := range r.Stacks {
		refCase := sc.Case
		refCase.Stack = sc.Reference
		fmt.Fprintf(b, "| %s | %s | %s | %.2f× | %.2f× (%s) | %s | %s |\n", cell(sc.Target), cell(sc.Path.Label()), cell(caseStackLabel(r, sc.Case)),
			sc.Speedup, sc.ReferenceSpeedup, cell(shortStack(sc.Reference)), ratioText(sc.Ratio, sc.RatioCI), cell(stackVerdict(sc)))
		if sc.VerdictKind == results.UnixFaster || sc.VerdictKind == results.TCPFaster {
			clear = append(clear, stackSentence(sc))
		}
	}
	b.WriteString("\n")
	for _, s := range clear {
		b.WriteString(s + "\n\n")
	}
}

// writeStacksMethod says how stacks were compared, in the details.
func writeStacksMethod(b *strings.Builder, r *results.Report) {
	if len(r.Stacks) == 0 {
		return
	}
	fmt.Fprintf(b, "### Client stacks compared\n\n"+
		"Every client stack ran on the same server instances, each in turn, so each instance gives each stack its own speedup (the median of its paired block ratios) "+
		"and the ratio of one stack's to %s's. The ratio reported is the median of the instances' ratios, with the distribution-free 95%% interval over instances "+
		"(Conover 1999, §3.2; Kalibera and Jones 2013) and the sign test over them, adjusted by Holm's method over the report's %d stack comparisons (a family of their own, "+
		"apart from the paths' comparisons). Above 1: the path gains more for the stack than for %s. Only speedups are compared: the stacks' absolute latencies were measured "+
		"apart, seconds from each other (%s), so one stack's latency is never divided by another's.\n\n",
		shortStack(r.Stacks[0].Reference), len(r.Stacks), shortStack(r.Stacks[0].Reference), goWhere(r))
}

// apartNote says, under a headline with several client stacks, that their
// latencies were not measured side by side.
func apartNote(r *results.Report) string {
	if len(r.Config.Clients) < 2 {
		return ""
	}
	return "The stacks' p50s were measured apart (each stack in turn; " + goWhere(r) + "): " +
		"compare each row's speedup, not one stack's latency with another's.\n\n"
}

// goWhere says where the report's Go client ran beside the agents: in
// dbsock's own agent, a process for each server instance, or in dbsock's
// own process.
func goWhere(r *results.Report) string {
	if freshGo(r) {
		return "Go's in dbsock's own agent and the others' in theirs, a fresh process for each server instance"
	}
	return "Go's inside dbsock's own process, the others in agent processes"
}
