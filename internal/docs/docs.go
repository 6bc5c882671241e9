// Package docs reads the Markdown of README.md and docs/: its figure
// blocks (which scripts/figures measures again), its relative links and
// the dbsock command lines it shows, so that a test can check them.
package docs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// A Figure is one figure block of a Markdown file.
type Figure struct {
	Kind, Command string
	Body          string // what the block holds now, between its markers
}

var figureRE = regexp.MustCompile(`(?s)<!-- figure (\w+): (.*?) -->\n(.*?)<!-- /figure -->`)

// Kinds are the figure kinds Rewrite accepts.
var Kinds = []string{"headline", "full", "explain", "sh"}

// Rewrite replaces the body of every figure block in text with what
// render returns for it.
func Rewrite(text string, render func(Figure) (string, error)) (string, error) {
	var errs []error
	out := figureRE.ReplaceAllStringFunc(text, func(block string) string {
		m := figureRE.FindStringSubmatch(block)
		fig := Figure{Kind: m[1], Command: m[2], Body: m[3]}
		if !known(fig.Kind) {
			errs = append(errs, fmt.Errorf("figure %q: kind %q is not one of %s", fig.Command, fig.Kind, strings.Join(Kinds, ", ")))
			return block
		}
		body, err := render(fig)
		if err != nil {
			errs = append(errs, fmt.Errorf("figure %q: %w", fig.Command, err))
			return block
		}
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		return strings.Replace(block, m[3]+"<!-- /figure -->", body+"<!-- /figure -->", 1)
	})
	return out, errors.Join(errs...)
}

func known(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// Figures lists the figure blocks of text.
func Figures(text string) []Figure {
	var figs []Figure
	for _, m := range figureRE.FindAllStringSubmatch(text, -1) {
		figs = append(figs, Figure{Kind: m[1], Command: m[2], Body: m[3]})
	}
	return figs
}

// Demote turns a report's headings into bold lines, so that a figure
// keeps the page's own outline.
func Demote(md string) string {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, "#"); t != l && strings.HasPrefix(t, " ") {
			lines[i] = "**" + strings.TrimSpace(t) + "**"
		}
	}
	return strings.Join(lines, "\n")
}

// Section returns the table under the heading named title in md.
func Section(md, title string) (string, error) {
	_, rest, ok := strings.Cut(md, " "+title+"\n")
	if !ok {
		return "", fmt.Errorf("the report has no section %q", title)
	}
	var table []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		} else if len(table) > 0 {
			break
		}
	}
	if len(table) == 0 {
		return "", fmt.Errorf("section %q has no table", title)
	}
	return strings.Join(table, "\n") + "\n", nil
}

// Split splits a command line into words as a POSIX shell would for the
// quoting README uses: single and double quotes, and backslashes.
func Split(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(runes) && strings.ContainsRune(`"\$`+"`", runes[i+1]):
				i++
				w.WriteRune(runes[i])
			default:
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(runes):
			i++
			if runes[i] != '\n' {
				w.WriteRune(runes[i])
				in = true
			}
		case r == '#' && !in:
			i = len(runes) // a comment, to the end of the line
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, line)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// A Link is a relative link of a Markdown file: a file beside it, with an
// optional #anchor.
type Link struct {
	Target, Anchor string
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Links lists the relative links of md (not http:, https: or mailto:).
func Links(md string) []Link {
	var links []Link
	for _, m := range linkRE.FindAllStringSubmatch(stripCode(md), -1) {
		u := m[1]
		if strings.Contains(u, "://") || strings.HasPrefix(u, "mailto:") {
			continue
		}
		target, anchor, _ := strings.Cut(u, "#")
		links = append(links, Link{Target: target, Anchor: anchor})
	}
	return links
}

// Anchors lists the anchors GitHub gives md's headings: lower case, spaces
// as hyphens, punctuation other than hyphens and underscores dropped.
func Anchors(md string) map[string]bool {
	anchors := map[string]bool{}
	for _, l := range strings.Split(stripCode(md), "\n") {
		t := strings.TrimLeft(l, "#")
		if t == l || !strings.HasPrefix(t, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(t)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

var fenceRE = regexp.MustCompile("(?ms)^\\s*```(\\w*)\n(.*?)^\\s*```")

// stripCode is md without its fenced code blocks.
func stripCode(md string) string {
	return fenceRE.ReplaceAllString(md, "")
}

var spanRE = regexp.MustCompile("`(dbsock [^`]+)`")

// CommandLines lists the dbsock command lines md shows, each as the words
// after "dbsock": in shell code blocks (continuation lines joined, comments
// and environment assignments dropped, one line per command of a && or |
// list; "go run ./cmd/dbsock" counts as dbsock), in code spans that start
// "dbsock ", and in figure blocks' commands.
func CommandLines(md string) ([][]string, error) {
	var lines [][]string
	var errs []error
	add := func(text string) {
		words, err := Split(text)
		if err != nil {
			errs = append(errs, err)
			return
		}
		lines = append(lines, commands(words)...)
	}
	for _, m := range fenceRE.FindAllStringSubmatch(md, -1) {
		switch m[1] {
		case "", "sh", "bash", "shell":
		default:
			continue
		}
		for _, l := range strings.Split(strings.ReplaceAll(m[2], "\\\n", " "), "\n") {
			add(l)
		}
	}
	prose := stripCode(md)
	for _, m := range spanRE.FindAllStringSubmatch(prose, -1) {
		add(m[1])
	}
	for _, f := range Figures(md) {
		if f.Kind != "sh" {
			add(f.Command)
		}
	}
	return lines, errors.Join(errs...)
}

// commands splits words at && || | ; and returns each dbsock command's
// arguments.
func commands(words []string) [][]string {
	var out [][]string
	var cur []string
	flush := func() {
		for len(cur) > 0 && isAssignment(cur[0]) {
			cur = cur[1:]
		}
		switch {
		case len(cur) > 0 && cur[0] == "dbsock":
			out = append(out, cur[1:])
		case len(cur) > 2 && cur[0] == "go" && cur[1] == "run" && cur[2] == "./cmd/dbsock":
			out = append(out, cur[3:])
		}
		cur = nil
	}
	for _, w := range words {
		switch {
		case w == "&&" || w == "||" || w == "|" || w == ";":
			flush()
		case redirectRE.MatchString(w):
			// a redirection (2>&1, >out.md, 2>/dev/null) is the shell's
		default:
			cur = append(cur, w)
		}
	}
	flush()
	return out
}

var redirectRE = regexp.MustCompile(`^[0-9]*[<>]`)

// isAssignment says whether w is a shell environment assignment (NAME=...).
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
