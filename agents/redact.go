package agents

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The passwords dbsock sends an agent must never reach a terminal, a
// report or a file through what the agent says back: an agent's answer,
// error or stderr may carry one raw, or as a JSON string holds it (with
// or without HTML's characters escaped, by Go's encoder, Python's or
// PHP's), or quoted by Go, and again inside another such string.

// notQuoted stands for a line of the agent's that carried a password.
const notQuoted = "[a line that carried a password dbsock sent it, not quoted]"

// encodings are the forms in which s may appear in text: raw, as the
// inside of a JSON string (HTML-escaped or not, "/" escaped or not,
// non-ASCII escaped or not), as Go quotes it, and each of these once more
// inside another.
func encodings(s string) []string {
	once := encode(s)
	seen := map[string]bool{}
	var out []string
	for _, e := range once {
		for _, e2 := range encode(e) {
			if e2 != "" && !seen[e2] {
				seen[e2] = true
				out = append(out, e2)
			}
		}
	}
	return out
}

// encode is s and each one-level encoding of s, without quotes.
func encode(s string) []string {
	forms := []string{s, unquote(strconv.Quote(s)), unquote(strconv.QuoteToASCII(s))}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) == nil {
			j := unquote(strings.TrimSpace(b.String()))
			forms = append(forms, j, strings.ReplaceAll(j, "/", `\/`), asciiJSON(j))
		}
	}
	return forms
}

func unquote(q string) string { return q[1 : len(q)-1] }

// asciiJSON is the inside of a JSON string with every non-ASCII rune
// escaped as \uXXXX (Python's json.dumps, PHP's json_encode).
func asciiJSON(j string) string {
	var b strings.Builder
	for _, r := range j {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			b.WriteString(`\u` + strconv.FormatInt(int64(0xd800+(r>>10)), 16) + `\u` + strconv.FormatInt(int64(0xdc00+(r&0x3ff)), 16))
		default:
			b.WriteString(`\u` + leftPad(strconv.FormatInt(int64(r), 16), 4))
		}
	}
	return b.String()
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// carries says whether s holds one of the agent's passwords in any form
// encodings knows, or, where s is JSON, in any string of it however
// escaped.
func (a *Agent) carries(s string) bool {
	for _, e := range a.secretForms() {
		if strings.Contains(s, e) {
			return true
		}
	}
	plain := unescaped(s)
	for _, p := range a.secrets {
		if q := unescaped(p); q != "" && strings.Contains(plain, q) {
			return true
		}
	}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return a.carriesValue(v)
	}
	return false
}

var (
	hexEscape  = regexp.MustCompile(`\\+(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))`)
	charEscape = regexp.MustCompile(`\\+([ntr])`)
)

// unescaped is s with every escape a quoting or an encoding may have
// made, at any depth, undone (\uXXXX, \xXX, \n, \t, \r after any number
// of backslashes), and every backslash left dropped: what carries
// compares, so that a password is found however an agent escaped it (or
// mangled its escapes).
func unescaped(s string) string {
	s = hexEscape.ReplaceAllStringFunc(s, func(m string) string {
		h := m[strings.LastIndexAny(m, "ux")+1:]
		n, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return m
		}
		return string(rune(n))
	})
	s = charEscape.ReplaceAllStringFunc(s, func(m string) string {
		return map[byte]string{'n': "\n", 't': "\t", 'r': "\r"}[m[len(m)-1]]
	})
	return strings.ReplaceAll(s, "\\", "")
}

// carriesValue says whether a decoded JSON value holds a password in a
// string or a key.
func (a *Agent) carriesValue(v any) bool {
	switch v := v.(type) {
	case string:
		return a.carries(v)
	case []any:
		for _, x := range v {
			if a.carriesValue(x) {
				return true
			}
		}
	case map[string]any:
		for k, x := range v {
			if a.carries(k) || a.carriesValue(x) {
				return true
			}
		}
	}
	return false
}

// redact replaces every password sent to the agent in s, in every form
// encodings knows, with ****; a text that still carries one (escaped in a
// way of its own) is not quoted at all: notQuoted stands for it.
func (a *Agent) redact(s string) string {
	for _, e := range a.secretForms() {
		s = strings.ReplaceAll(s, e, "****")
	}
	if len(a.secrets) > 0 && a.carries(s) {
		return notQuoted
	}
	return s
}

// secretForms are the encodings of every secret, the longest first.
func (a *Agent) secretForms() []string {
	if a.formsOf != len(a.secrets) {
		a.forms = nil
		for _, p := range a.secrets {
			a.forms = append(a.forms, encodings(p)...)
		}
		slices.SortStableFunc(a.forms, func(x, y string) int { return len(y) - len(x) })
		a.formsOf = len(a.secrets)
	}
	return a.forms
}

// quotable is s, an agent's text that dbsock quotes, with every line
// that carries a password left out (notQuoted stands for it), and
// whatever password remains replaced.
func (a *Agent) quotable(s string) string {
	if len(a.secrets) == 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if a.carries(l) {
			lines[i] = notQuoted
		}
	}
	return a.redact(strings.Join(lines, "\n"))
}
