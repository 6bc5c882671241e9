package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errorLines is err as the lines dbsock prints on stderr: one per error
// that errors.Join joined (a run's outputs, compare's regressions), each in
// the command's words (inWords) and made visible: an agent's, a server's
// or a file's text reaches the terminal as one line of text, never as its
// escape sequences or as a line of its own that would read as dbsock's.
func errorLines(err error) []string {
	if xe, ok := err.(*exitError); ok {
		err = xe.err
	}
	if parts := joined(err); parts != nil {
		var lines []string
		for _, e := range parts {
			lines = append(lines, errorLines(e)...)
		}
		return lines
	}
	return []string{visibleLine(inWords(err))}
}

// joined is what errors.Join joined into err, or nil: an error whose
// message is its parts' messages, a line each.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	parts := j.Unwrap()
	var msgs []string
	for _, e := range parts {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) == 0 || err.Error() != strings.Join(msgs, "\n") {
		return nil
	}
	return parts
}

// visibleLine is s on one line of visible text: its lines folded into one
// ("; " between them), and every control or format character (ESC, a
// carriage return, NUL, a bidirectional override) and every byte that is
// not UTF-8 shown escaped, as Go writes it in a string (\x1b, \r, \x00,
// \u202e).
func visibleLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	s = strings.Join(lines, "; ")
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteByte(' ')
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
