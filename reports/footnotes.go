package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/results"
)

// The headline's footnotes: each warned row's warnings in a few words,
// linking the details that say them whole.

// shortWarning is w in a few words: its own first clause (a warning's
// words begin with what it warns of: "The machine was noisy: ..."), at
// most about 60 characters.
func shortWarning(w results.Warning) string {
	s := w.String()
	for _, sep := range []string{". ", ": ", "; "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	// Cut between words, so that no escape or entity of the safe copy is
	// cut in half.
	var kept []string
	n := 0
	for _, word := range strings.Fields(s) {
		if n += len([]rune(word)) + 1; n > 60 && len(kept) > 0 {
			kept = append(kept, "…")
			break
		}
		kept = append(kept, word)
	}
	return strings.Join(kept, " ")
}

// rowWarnings are a headline row's warnings in a few words each: its
// case's, then, when its target has several rows (client stacks, a
// sweep), nothing of the target's (writeWarnings says those once, under
// the target's name), else its target's; each said once.
func rowWarnings(r *results.Report, s results.Summary) []string {
	var out []string
	add := func(ws []results.Warning) {
		for _, w := range ws {
			if sw := shortWarning(w); sw != "" && !slices.Contains(out, sw) {
				out = append(out, sw)
			}
		}
	}
	add(s.Warnings)
	if rowsOf(r, s.Target) > 1 {
		return out
	}
	for _, t := range r.Targets {
		if t.Name == s.Target {
			add(t.Warnings)
		}
	}
	return out
}

// rowsOf is how many headline rows target has.
func rowsOf(r *results.Report, target string) int {
	n := 0
	for _, s := range r.Summary {
		if s.Target == target {
			n++
		}
	}
	return n
}

// targetWarnings are, for each target with several headline rows, its own
// warnings in a few words: said once, not on each of its rows.
func targetWarnings(r *results.Report) []warnedRow {
	var out []warnedRow
	for _, t := range r.Targets {
		if rowsOf(r, t.Name) <= 1 {
			continue
		}
		var words []string
		for _, w := range t.Warnings {
			if sw := shortWarning(w); sw != "" && !slices.Contains(words, sw) {
				words = append(words, sw)
			}
		}
		if len(words) > 0 {
			out = append(out, warnedRow{name: t.Name + " (all its rows)", words: words})
		}
	}
	return out
}

// warnedRow is one headline row with warnings, for the footnote.
type warnedRow struct {
	name  string
	words []string
}

// writeWarnings writes the † footnote: each warned row with its warnings
// in a few words, and a link to the details.
func writeWarnings(b *strings.Builder, rows []warnedRow) {
	if len(rows) == 0 {
		return
	}
	var parts []string
	for _, w := range rows {
		parts = append(parts, fmt.Sprintf("%s: %s", w.name, strings.Join(w.words, "; ")))
	}
	fmt.Fprintf(b, "† Warnings: %s ([details](#details)).\n\n", strings.Join(parts, ". "))
}
