// Package visible makes text from outside dbsock (an agent's hello, a
// server's or a file's words) safe to print on a terminal: one line of
// visible text, never an escape sequence that would retitle the terminal,
// clear the screen or colour what follows, and never a line of its own
// that would read as dbsock's.
package visible

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line is s on one line of visible text: its lines folded into one ("; "
// between them), and every control or format character (ESC, a carriage
// return, NUL, a bidirectional override) and every byte that is not UTF-8
// shown escaped, as Go writes it in a string (\x1b, \r, \x00, \u202e).
func Line(s string) string {
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
