package reports

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// The post's figure's rows: each case a row, named by what tells it apart
// from the target's other cases, in an order a reader follows: a sweep's
// points in numeric order, and otherwise the fastest first.

// speedupEntry is one case of the figure before layout.
type speedupEntry struct {
	target, label string
	c             results.Case
	sort          float64
	bars          []speedupRow // one per compared path (y and color set)
}

// speedupEntries are r's cases as the figure's rows, per target in the
// order the run measured them (orderEntries orders each target's).
func speedupEntries(r *results.Report, paths []drivers.Transport) (targets []string, byTarget map[string][]speedupEntry) {
	byTarget = map[string][]speedupEntry{}
	failed := map[string]bool{}
	for _, t := range r.Targets {
		failed[t.Name] = t.Error != ""
	}
	for _, s := range r.Summary {
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
		e := speedupEntry{target: s.Target, label: figureCaseLabel(r, s), c: s.Case, sort: math.Inf(-1)}
		if failed[s.Target] {
			e.label += " (incomplete)"
		}
		for j, path := range paths {
			b := barOf(&s, path)
			if j == 0 && b.c > 0 {
				e.sort = b.c
			}
			e.bars = append(e.bars, b)
		}
		byTarget[s.Target] = append(byTarget[s.Target], e)
	}
	for _, t := range r.Targets {
		if failed[t.Name] && byTarget[t.Name] == nil {
			targets = append(targets, t.Name)
			byTarget[t.Name] = []speedupEntry{{target: t.Name, label: t.Name + " (failed)", bars: []speedupRow{{label: "failed", decided: true}}}}
		}
	}
	for _, t := range targets {
		byTarget[t] = orderEntries(byTarget[t])
	}
	return targets, byTarget
}

// barOf is the bar of path's comparison in case s: its speedup and
// interval, and whether its verdict is a result a reader may take from
// the bar (a winner, or no meaningful difference) or not (undecided, no
// interval, the generator fell behind), said beside its value.
func barOf(s *results.Summary, path drivers.Transport) speedupRow {
	b := speedupRow{color: pathColor(path), decided: true}
	cmp := s.ComparisonOf(path)
	if cmp != nil && cmp.SpeedupP50 > 0 {
		b.c, b.lo, b.hi = cmp.SpeedupP50, cmp.SpeedupP50, cmp.SpeedupP50
		if ci := cmp.SpeedupP50CI; ci != nil {
			b.c, b.lo, b.hi = ci.Center, ci.Lo, ci.Hi
		}
	}
	b.label = speedupLabel(b.c, b.lo, b.hi, cmp != nil && cmp.SpeedupP50CI != nil)
	if cmp != nil && b.c > 0 {
		if note, ok := undecidedNotes[cmp.VerdictKind]; ok {
			b.decided, b.label = false, b.label+": "+note
		}
	}
	return b
}

// undecidedNotes say, of a bar whose verdict is no result to read, why:
// its bar is drawn hollow and grey, and this follows its value.
var undecidedNotes = map[results.VerdictKind]string{
	results.FellBehind:      "no winner, the generator fell behind",
	results.Undecided:       "undecided",
	results.NotSignificant:  "undecided after Holm's adjustment",
	results.TooFewPairs:     "no interval, too few block pairs",
	results.TooFewInstances: "no interval, too few server instances",
	"":                      "no verdict",
}

// orderEntries orders one target's rows: cases that differ only in a
// swept number (workers, value size, depth, rate) stay together in
// numeric order, and such groups come fastest first (by the best of their
// first path's speedups).
func orderEntries(es []speedupEntry) []speedupEntry {
	group := func(c results.Case) results.Case {
		c.Concurrency, c.ValueSize, c.Pipeline, c.Rate = 0, 0, 0, 0
		return c
	}
	best := map[results.Case]float64{}
	for _, e := range es {
		k := group(e.c)
		if v, ok := best[k]; !ok || e.sort > v {
			best[k] = e.sort
		}
	}
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b speedupEntry) int {
		ga, gb := group(a.c), group(b.c)
		if ga != gb {
			return cmp.Compare(best[gb], best[ga])
		}
		return cmp.Or(cmp.Compare(a.c.Concurrency, b.c.Concurrency), cmp.Compare(a.c.ValueSize, b.c.ValueSize),
			cmp.Compare(a.c.Pipeline, b.c.Pipeline), cmp.Compare(a.c.Rate, b.c.Rate))
	})
	return out
}

// maxRowLabel is the most characters a row's name takes on the figure.
const maxRowLabel = 48

// figureCaseLabel names a case's row: its stack and library with their
// versions when the run measured several stacks, and what tells the case
// apart from the target's other cases of that stack, with the load it
// ran at (its workers and rate) always: "C gcc 12.2 (hiredis 0.14.1),
// 2,000/s". A case alone is named by its target.
func figureCaseLabel(r *results.Report, s results.Summary) string {
	label := ""
	if len(r.Config.Clients) > 0 {
		label, _ = figureStackParts(s)
	}
	label = joinNonEmpty(label, caseParts(r, s.Case))
	if label == "" {
		label = s.Target
	}
	return label
}

// cutLabel is a row's name cut to maxRowLabel characters (with …): the
// names take no more than their share of the figure's width.
func cutLabel(label string) string {
	if n := []rune(label); len(n) > maxRowLabel {
		return string(n[:maxRowLabel-1]) + "…"
	}
	return label
}

// caseParts names what of case c differs from the target's other cases
// of its stack (its scenario and mode, value size, op, depth), and its
// workers and rate where it has them: "pk (prepared), 16 workers, 1 KiB,
// 2,000/s".
func caseParts(r *results.Report, c results.Case) string {
	varies := func(f func(results.Case) string) bool {
		for _, s := range r.Summary {
			if s.Target == c.Target && s.Stack == c.Stack && f(s.Case) != f(c) {
				return true
			}
		}
		return false
	}
	scenario := func(c results.Case) string { return strings.TrimSpace(c.Scenario + " " + c.Mode) }
	var parts []string
	for _, d := range []struct {
		of    func(results.Case) string
		words string
		shown bool
	}{
		{scenario, scenario(c), false},
		{func(c results.Case) string { return fmt.Sprint(c.Concurrency) }, fmt.Sprintf("%d workers", c.Concurrency), c.Concurrency > 1},
		{func(c results.Case) string { return fmt.Sprint(c.ValueSize) }, results.FormatSize(c.ValueSize), false},
		{func(c results.Case) string { return c.Op + c.Mix }, strings.TrimSpace(c.Op + " " + c.Mix), false},
		{func(c results.Case) string { return fmt.Sprint(c.Pipeline) }, fmt.Sprintf("pipeline %d", c.Lookups()), false},
		{func(c results.Case) string { return fmt.Sprint(c.Rate) }, words.Thousands(c.Rate) + "/s", c.Rate > 0},
	} {
		if d.words != "" && (d.shown || varies(d.of)) {
			parts = append(parts, d.words)
		}
	}
	return strings.Join(parts, ", ")
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}

// targetHeader names a target over its rows: "redis (Redis 7.0.15)".
func targetHeader(r *results.Report, target string) string {
	for _, t := range r.Targets {
		if t.Name == target && t.Server.Product != "" {
			return fmt.Sprintf("%s (%s)", target, t.Server)
		}
	}
	return target
}

// figureStackParts are stackParts for a picture: the library by its
// short name ("go-redis v9.23.0", not its module path).
func figureStackParts(s results.Summary) (name, model string) {
	if s.Client != nil {
		c := *s.Client
		c.Library = shortLibrary(c.Library)
		s.Client = &c
	}
	return stackParts(s)
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// shortLibrary is a library's name without the path of its Go module:
// "github.com/redis/go-redis/v9" is "go-redis".
func shortLibrary(lib string) string {
	parts := strings.Split(lib, "/")
	if len(parts) > 1 && majorVersion.MatchString(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
	}
	return parts[len(parts)-1]
}
