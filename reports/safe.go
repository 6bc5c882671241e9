package reports

import (
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dbsock/dbsock/results"
)

// maxField is the most of one report string that Markdown (and HTML)
// renders: a report file is input, and one long field must not make a
// report of gigabytes (every environment row is padded to the table's
// widest cell).
const maxField = 512

// safeCopy is r with every string made safe to render as Markdown (and
// through Markdown as HTML): one line, at most maxField characters, and
// every character Markdown or HTML would read as syntax escaped
// (markdownText), so that a report file cannot inject HTML or break the
// layout. Encoded histograms are left whole. Render a safe copy once:
// escaping an escaped text escapes it again.
func safeCopy(r *results.Report) *results.Report { return cleanCopy(r, safeText) }

// plainCopy is r with every string on one line and at most maxField
// characters (plainText), nothing escaped: for the formats whose writers
// escape for themselves (JSON, CSV) or that take no markup (benchfmt, the
// chart's text).
func plainCopy(r *results.Report) *results.Report { return cleanCopy(r, plainText) }

// cleanCopy is a deep copy of v with every string through clean, but
// fields called Histogram.
func cleanCopy[T any](v *T, clean func(string) string) *T {
	c := reflect.New(reflect.TypeOf(*v)).Elem()
	copyClean(c, reflect.ValueOf(v).Elem(), "", clean)
	return c.Addr().Interface().(*T)
}

var warningType = reflect.TypeOf(results.Warning{})

// copyClean copies src into dst, each string through clean but fields
// called Histogram, without ever copying a long string whole.
func copyClean(dst, src reflect.Value, field string, clean func(string) string) {
	if src.Type() == warningType { // its words are unexported: copy them as they read
		dst.Set(reflect.ValueOf(results.Says(clean(src.Interface().(results.Warning).String()))))
		return
	}
	switch src.Kind() {
	case reflect.String:
		if field == "Histogram" {
			dst.SetString(src.String())
		} else {
			dst.SetString(clean(src.String()))
		}
	case reflect.Pointer:
		if !src.IsNil() {
			n := reflect.New(src.Type().Elem())
			copyClean(n.Elem(), src.Elem(), field, clean)
			dst.Set(n)
		}
	case reflect.Struct:
		dst.Set(src) // unexported fields (time.Time's, a run's decoded histogram) as they are
		t := src.Type()
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				copyClean(dst.Field(i), src.Field(i), t.Field(i).Name, clean)
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
		for i := 0; i < src.Len(); i++ {
			copyClean(dst.Index(i), src.Index(i), field, clean)
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeMapWithSize(src.Type(), src.Len()))
		for _, k := range src.MapKeys() {
			v := reflect.New(src.Type().Elem()).Elem()
			copyClean(v, src.MapIndex(k), field, clean)
			key := reflect.New(k.Type()).Elem()
			copyClean(key, k, "", clean)
			dst.SetMapIndex(key, v)
		}
	default:
		dst.Set(src)
	}
}

// plainText is s on one line, without control characters (a terminal's
// escape sequences), cut to maxField characters (with …).
func plainText(s string) string {
	if len(s) > 4*maxField { // cut first: a huge string is never copied whole
		s = strings.ToValidUTF8(s[:4*maxField], "")
	}
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > maxField {
		s = string([]rune(s)[:maxField-1]) + "…"
	}
	return s
}

// safeText is s on one line, cut to maxField characters, as Markdown text
// (markdownText).
func safeText(s string) string { return markdownText(plainText(s)) }

// markdownText is s, a string from a report file, a server or a user on
// one line, as Markdown text that reads as s: every character that
// Markdown or HTML would take for syntax is escaped (<, > and & as
// entities; \, *, _ (but within a word), [, ], ~, | and a backtick
// without its pair with a backslash; a #, -, +, = or list number that
// starts it likewise), so that it raises no HTML, heading, link or
// emphasis and stays in its table cell. A code span (text between a pair
// of backticks, without |) is kept as it is: inside one, every character
// shows as itself.
func markdownText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '`' {
			n := run(s[i:])
			if end := closing(s, i+n, n); end >= 0 {
				b.WriteString(s[i : end+n]) // a code span: shown as it is
				i = end + n
				continue
			}
			b.WriteString(strings.Repeat("\\`", n))
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '_':
			if !inWord(s, i) {
				b.WriteByte('\\') // within a word (unix_faster) it emphasizes nothing
			}
			b.WriteRune(r)
		case '\\', '*', '[', ']', '~', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '#', '-', '+', '=':
			if i == 0 && (r == '#' || len(s) == 1 || s[1] == ' ' || rune(s[1]) == r) {
				b.WriteByte('\\') // a heading, list item, rule or underline where it starts a line
			}
			b.WriteRune(r)
		case '.', ')':
			if i > 0 && strings.Trim(s[:i], "0123456789") == "" && (i+1 == len(s) || s[i+1] == ' ') {
				b.WriteByte('\\') // "1. " would start a numbered list
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// inWord says whether s[i] has a letter or digit on both sides.
func inWord(s string, i int) bool {
	if i == 0 || i+1 >= len(s) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i+1:])
	return isAlnum(before) && isAlnum(after)
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// run is the length of the backtick run s starts with.
func run(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// closing is where, from i on, a run of exactly n backticks closes a code
// span, or -1 (also when the span would hold a |, which a table cell reads
// as its end).
func closing(s string, i, n int) int {
	for j := i; j < len(s); {
		switch {
		case s[j] == '|':
			return -1
		case s[j] == '`':
			m := run(s[j:])
			if m == n {
				return j
			}
			j += m
		default:
			j++
		}
	}
	return -1
}

// unescape undoes markdownText on a text with no code span in it.
var unescape = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&",
	`\\`, `\`, `\*`, "*", `\_`, "_", `\[`, "[", `\]`, "]", `\~`, "~", `\|`, "|", "\\`", "`",
	`\#`, "#", `\-`, "-", `\+`, "+", `\=`, "=", `\.`, ".", `\)`, ")")

// PlainText is s, a text this package wrote as Markdown (WorkloadDiffers,
// RunsDiffer), as plain text for a terminal's error line: the escapes
// markdownText wrote become the characters again.
func PlainText(s string) string { return unescape.Replace(s) }

// codeSpan is s, a safe text (safeText), as a Markdown code span: inside
// one, Markdown and HTML show every character as it is, so the escapes
// safeText wrote become the characters again (a threshold reads
// "lo>=1.0", not "lo&gt;=1.0"). A text with a backtick stays as it is.
func codeSpan(s string) string {
	if strings.Contains(s, "`") {
		return s
	}
	return "`" + unescape.Replace(s) + "`"
}

// cell is a string for a Markdown table cell: a | would end the cell, so
// one not escaped already is (GFM reads \| as | in a cell, code spans
// included).
func cell(s string) string {
	if !strings.Contains(s, "|") {
		return s
	}
	var b strings.Builder
	slashes := 0
	for _, c := range s {
		if c == '|' && slashes%2 == 0 {
			b.WriteByte('\\')
		}
		if c == '\\' {
			slashes++
		} else {
			slashes = 0
		}
		b.WriteRune(c)
	}
	return b.String()
}
